/**
 * A cluster under test: N real `serve` replicas on a private Redis (random key prefix) or
 * one on SQLite, behind a front (round-robin proxy or nginx), behind the chaos TCP proxy
 * through which every client connects (so the nemesis can cut client connections). Set up
 * once per topology and reused by its schedules: every nemesis operation leaves N replicas
 * running, and {@link Cluster.heal} restores that after a failed schedule.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startChaosProxy, type ChaosProxy } from '../../src/chaos/proxy.js';
import { freePort } from '../helpers/processes.js';
import { randomPrefix, redisCommand, startRedis, type RedisServer } from '../helpers/redis.js';
import { startFront, type FrontProcess } from './front.js';
import type { Topology } from './schedule.js';
import { startServe, type ServeProcess, type ServeSpec } from './serve-process.js';

export const LEASE_MS = 1_000;
/** SIGTERM's drain bound: calls here last well under a second. */
const DRAIN_MS = 2_500;

export interface Cluster {
  readonly topology: Topology;
  /** What clients connect to: the chaos proxy in front of the front. */
  readonly url: URL;
  readonly replicas: readonly ServeProcess[];
  readonly redis: RedisServer | undefined;
  /** Replaces replica `index` with a new process (same port unless `newPort`), updating the front. */
  replace(index: number, newPort: boolean): Promise<ServeProcess>;
  /** Starts a replica on a new port and adds it to the front (index = replicas.length - 1). */
  add(): Promise<void>;
  /** Removes replica `index` (already exited) from the front. */
  remove(index: number): Promise<void>;
  /** Resets open client connections: all of them, or the most recent one. */
  cut(all: boolean): number;
  /** Client connections open through the chaos proxy. */
  readonly connections: number;
  /** Drops every pub/sub connection on the Redis. */
  killPubsub(): Promise<string>;
  /** How many times the tally tool ran each id with this prefix. */
  runs(prefix: string): Map<string, number>;
  /** Back to N live, running replicas. */
  heal(): Promise<void>;
  /** Stderr lines of replicas that exited without being told to. */
  readonly crashes: string[];
  close(): Promise<void>;
}

export async function startCluster(topology: Topology): Promise<Cluster> {
  const dir = mkdtempSync(join(tmpdir(), 'mcpc-lifecycle-'));
  const tallyFile = join(dir, 'tally');
  writeFileSync(tallyFile, '');
  const redis = topology.store === 'redis' ? await startRedis() : undefined;
  const store = redis ? `${redis.url}?leaseMs=${LEASE_MS}&prefix=${encodeURIComponent(randomPrefix('lifecycle'))}` : `sqlite:${join(dir, 'sessions.db')}`;
  const frontPort = await freePort();
  const sockets = new Set<Socket>();
  const chaos: ChaosProxy = await startChaosProxy({ upstream: { host: '127.0.0.1', port: frontPort } });
  chaos.server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  const spec: ServeSpec = { store, tallyFile, allowedHosts: `127.0.0.1:${chaos.port}`, drainMs: DRAIN_MS };
  const replicas: ServeProcess[] = [];
  // A replica on a new port comes from a spare started ahead, outside the front (it owns
  // nothing until the front sends it a request): starting one takes seconds on a busy machine.
  let spare: Promise<ServeProcess> | undefined;
  const startSpare = (): void => {
    spare = freePort().then((port) => startServe(port, spec));
    spare.catch(() => {}); // a failed spare is started afresh when it is taken
  };
  const takeSpare = async (): Promise<ServeProcess> => {
    const next = spare ?? freePort().then((port) => startServe(port, spec));
    startSpare();
    return next.catch(async () => startServe(await freePort(), spec));
  };
  const crashes: string[] = [];
  let front: FrontProcess | undefined;
  const close = async (): Promise<void> => {
    await chaos.close().catch(() => {});
    await front?.close().catch(() => {});
    const last = await spare?.catch(() => undefined);
    if (last) replicas.push(last);
    for (const r of replicas) r.signal('SIGKILL');
    await Promise.all(replicas.map((r) => r.exited(10_000).catch(() => {})));
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < topology.replicas; i++) replicas.push(await startServe(await freePort(), spec));
    front = await startFront(
      topology.front,
      replicas.map((r) => r.url),
      frontPort,
    );
    // The round-robin proxy picks its own port; the chaos proxy follows it.
    const upstream = { host: '127.0.0.1', port: front.port };
    chaos.setPlan(() => ({ upstream }));
    if (redis) startSpare();
  } catch (error) {
    await close();
    throw error;
  }
  const f = front;
  const urls = (): URL[] => replicas.map((r) => r.url);
  return {
    topology,
    url: new URL(`http://127.0.0.1:${chaos.port}/mcp`),
    replicas,
    redis,
    crashes,
    async replace(index, newPort) {
      const old = replicas[index] as ServeProcess;
      if (old.alive) throw new Error(`replica ${index} is still running`);
      replicas[index] = newPort ? await takeSpare() : await startServe(old.port, spec);
      if (newPort) await f.setUpstreams(urls());
      return replicas[index];
    },
    async add() {
      replicas.push(await takeSpare());
      await f.setUpstreams(urls());
    },
    async remove(index) {
      replicas.splice(index, 1);
      await f.setUpstreams(urls());
    },
    get connections() {
      return sockets.size;
    },
    cut(all) {
      const open = [...sockets];
      const victims = all ? open : open.slice(-1);
      for (const s of victims) s.resetAndDestroy();
      return victims.length;
    },
    async killPubsub() {
      if (!redis) return 'no redis';
      return (await redisCommand(redis.port, ['CLIENT', 'KILL', 'TYPE', 'pubsub'])).trim();
    },
    runs(prefix) {
      const counts = new Map<string, number>();
      for (const id of readFileSync(tallyFile, 'utf8').split('\n')) if (id.startsWith(prefix)) counts.set(id, (counts.get(id) ?? 0) + 1);
      return counts;
    },
    async heal() {
      for (let i = 0; i < replicas.length; i++) {
        const r = replicas[i] as ServeProcess;
        r.signal('SIGCONT');
        if (!r.alive) {
          crashes.push(`replica on port ${r.port} was found dead: ${r.stderr.slice(-5).join(' | ')}`);
          replicas[i] = await startServe(r.port, spec);
        }
      }
      let changed = false;
      while (replicas.length > topology.replicas) {
        const extra = replicas.pop() as ServeProcess;
        extra.signal('SIGKILL');
        await extra.exited(10_000);
        changed = true;
      }
      // Only when the set changed: a needless nginx reload closes connections between schedules.
      if (changed) await f.setUpstreams(urls());
    },
    close,
  };
}
