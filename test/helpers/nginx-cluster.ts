/**
 * Three `serve` replicas on a private Redis (`leaseMs=1000`) behind a real nginx: the rig
 * of the rolling-restart tests. Each replica is started with its own port and nginx's
 * address as its allowed public name, plus `extraArgs`; `conf(ports)` writes nginx's
 * configuration for the replicas' current ports (reloads call it again).
 */
import { redisStore } from '../../src/store/redis/index.js';
import type { Store } from '../../src/store/types.js';
import { startNginx, type Nginx } from './nginx.js';
import { freePort } from './processes.js';
import { startRedis, type RedisServer } from './redis.js';
import { startReplica, type Replica } from './replicas.js';

export interface NginxCluster {
  readonly redis: RedisServer;
  /** The store URL every replica is given. */
  readonly spec: string;
  /** A store of the test's own on the same Redis (ownership lookups). */
  readonly store: Store;
  readonly nginx: Nginx;
  /** Replica ports and processes, index for index; tests replace entries as they restart replicas. */
  readonly ports: number[];
  readonly replicas: Replica[];
  /** The arguments of a replica on `port`. */
  readonly args: (port: number) => string[];
}

export async function startNginxCluster(conf: (ports: readonly number[]) => string, extraArgs: readonly string[] = []): Promise<NginxCluster> {
  const redis = await startRedis();
  const spec = `${redis.url}?leaseMs=1000`;
  const front = await freePort();
  const ports: number[] = [];
  for (let i = 0; i < 3; i++) ports.push(await freePort());
  const args = (port: number): string[] => ['--port', String(port), '--allowed-hosts', `127.0.0.1:${front}`, ...extraArgs];
  const replicas = await Promise.all(ports.map((p) => startReplica(spec, args(p))));
  const nginx = await startNginx(conf(ports), front);
  const store = await redisStore({ url: spec });
  return { redis, spec, store, nginx, ports, replicas, args };
}

/** Stops everything `startNginxCluster` started (nothing if it never ran). */
export async function stopNginxCluster(cluster: NginxCluster | undefined): Promise<void> {
  if (!cluster) return;
  await cluster.nginx.stop();
  await Promise.all(cluster.replicas.map((r) => r.kill('SIGKILL')));
  await cluster.store.close().catch(() => {});
  await cluster.redis.stop();
}
