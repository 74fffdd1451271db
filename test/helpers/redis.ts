/**
 * Real Redis servers for tests: the machine's shared one (127.0.0.1:6379, never flushed or
 * reconfigured: tests use random key prefixes), private standalone servers that a test may
 * kill and restart, and a three-master Redis Cluster. Private servers keep nothing on disk
 * (`--save "" --appendonly no`), live in a temp dir, listen on free ports and are killed by
 * `stop()`; register `stop` in an `after` hook.
 *
 * No Redis at all: {@link redisOrSkip} skips loudly locally and fails when `CI=true`.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { waitFor } from './wait.js';

export const SHARED_REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Prefixes handed out in this process: their keys on the shared server are deleted when the test file ends. */
const handedOut = new Set<string>();

/**
 * A random key prefix, so tests on the shared server never see each other's keys. Under
 * the test runner, whatever was written under it on the shared server is deleted once the
 * file's tests end: the suite leaves the machine's Redis as it found it.
 */
export function randomPrefix(tag = 't'): string {
  const prefix = `mcpc-test:${tag}:${randomBytes(6).toString('hex')}:`;
  handedOut.add(prefix);
  return prefix;
}

/** Deletes every key under the prefixes handed out (SCAN, then UNLINK in batches); a server that is gone is no error. */
async function forgetPrefixes(): Promise<void> {
  if (handedOut.size === 0 || !(await redisAnswers())) return;
  const { createClient } = await import('@redis/client');
  const client = createClient({ url: SHARED_REDIS_URL });
  client.on('error', () => {});
  try {
    await client.connect();
    for (const prefix of handedOut) {
      // The prefix is ours (hex and a tag), but glob characters are escaped all the same.
      const match = `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
      for await (const keys of client.scanIterator({ MATCH: match, COUNT: 1000 })) if (keys.length > 0) await client.unlink(keys);
    }
    handedOut.clear();
  } finally {
    await client.quit().catch(() => client.destroy());
  }
}

// Only test files run under the runner (it sets NODE_TEST_CONTEXT in each file's process);
// the harness and bench scripts that share these helpers clean up their own servers.
if (process.env.NODE_TEST_CONTEXT !== undefined) {
  const { after } = await import('node:test');
  after(forgetPrefixes);
}

/** Sends one command in RESP and returns the raw reply text (first reply only), or rejects on a socket error. */
export function redisCommand(port: number, args: readonly string[], host = '127.0.0.1', timeoutMs = 2_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    let data = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`redis ${host}:${port} did not answer ${args[0]} within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.setEncoding('utf8');
    socket.once('connect', () => socket.write(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`));
    socket.on('data', (chunk: string) => {
      data += chunk;
      if (complete(data)) {
        clearTimeout(timer);
        socket.end();
        resolve(data);
      }
    });
    socket.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

/** Is one whole RESP reply in `data`? (Enough for the simple and bulk replies used here.) */
function complete(data: string): boolean {
  if (!data.endsWith('\r\n')) return false;
  if (data[0] !== '$') return true;
  const header = data.indexOf('\r\n');
  const length = Number(data.slice(1, header));
  return length < 0 || Buffer.byteLength(data) >= header + 2 + length + 2;
}

/** Does a Redis server answer PING at `url`? */
export async function redisAnswers(url = SHARED_REDIS_URL): Promise<boolean> {
  const { hostname, port } = new URL(url);
  try {
    return (await redisCommand(Number(port || 6379), ['PING'], hostname, 1_000)).startsWith('+PONG');
  } catch {
    return false;
  }
}

/**
 * Whether Redis tests can run. Without a server: a loud skip locally, a failure in CI
 * (`CI=true`), where `.ci/run` starts one.
 */
export async function redisOrSkip(what: string): Promise<boolean> {
  if (await redisAnswers()) return true;
  const message = `Redis is not reachable at ${SHARED_REDIS_URL}: ${what} cannot run. Start one with: redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no`;
  if (process.env.CI === 'true') throw new Error(message);
  console.warn(`\n*** SKIPPED: ${message}\n`);
  return false;
}

/** A port that was free a moment ago, whose cluster bus port (port + 10000) is free too. */
async function freeRedisPort(): Promise<number> {
  for (;;) {
    const port = await listenFree(0);
    if (port + 10_000 < 65_536 && (await isFree(port + 10_000))) return port;
  }
}

async function listenFree(port: number): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  const { port: got } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return got;
}

async function isFree(port: number): Promise<boolean> {
  try {
    await listenFree(port);
    return true;
  } catch {
    return false;
  }
}

/** A private `redis-server` a test may kill and restart. */
export interface RedisServer {
  readonly port: number;
  readonly url: string;
  /** Is the process running? */
  readonly running: boolean;
  /** Kills it (SIGKILL by default) and waits until it is gone. Data is lost (nothing on disk). */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Sends SIGSTOP / SIGCONT: the server stops answering but keeps its connections. */
  pause(): void;
  resume(): void;
  /** Starts it again on the same port, empty. */
  restart(): Promise<void>;
  /** Kills it and removes its directory. */
  stop(): Promise<void>;
}

function spawnRedis(port: number, dir: string, extra: readonly string[]): ChildProcess {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...extra], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  child.once('error', () => {}); // reported by the readiness wait
  return child;
}

async function waitReady(port: number, child: ChildProcess): Promise<void> {
  await waitFor(async () => {
    if (child.exitCode !== null) throw new Error(`redis-server on port ${port} exited with ${child.exitCode}`);
    try {
      return (await redisCommand(port, ['PING'], '127.0.0.1', 500)).startsWith('+PONG');
    } catch {
      return false;
    }
  }, `redis-server on port ${port} to answer PING`);
}

async function killChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  if (signal !== 'SIGKILL' && signal !== 'SIGCONT') child.kill('SIGCONT'); // a paused server cannot handle SIGTERM
  child.kill(signal);
  await gone;
}

/** Starts a standalone `redis-server` on a free port, in a temp dir, persisting nothing. */
export async function startRedis(extra: readonly string[] = []): Promise<RedisServer> {
  const port = await freeRedisPort();
  const dir = mkdtempSync(join(tmpdir(), 'mcpc-redis-'));
  let child = spawnRedis(port, dir, extra);
  await waitReady(port, child);
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    get running() {
      return child.exitCode === null && child.signalCode === null;
    },
    kill: (signal) => killChild(child, signal),
    pause: () => void child.kill('SIGSTOP'),
    resume: () => void child.kill('SIGCONT'),
    async restart() {
      await killChild(child);
      child = spawnRedis(port, dir, extra);
      await waitReady(port, child);
    },
    async stop() {
      await killChild(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A Redis Cluster of private servers. */
export interface RedisCluster {
  readonly ports: readonly number[];
  /** For `redisStore({ cluster: { rootNodes } })`. */
  readonly rootNodes: ReadonlyArray<{ url: string }>;
  stop(): Promise<void>;
}

/**
 * Starts `masters` cluster-enabled servers, joins them with `redis-cli --cluster create`
 * (no replicas) and waits until every node reports `cluster_state:ok`.
 */
export async function startRedisCluster(masters = 3): Promise<RedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'mcpc-redis-cluster-'));
  const children: ChildProcess[] = [];
  const ports: number[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(children.map((c) => killChild(c)));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < masters; i++) {
      const port = await freeRedisPort();
      ports.push(port);
      children.push(spawnRedis(port, dir, ['--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`, '--cluster-node-timeout', '5000']));
    }
    await Promise.all(ports.map((p, i) => waitReady(p, children[i] as ChildProcess)));
    const create = spawnSync('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    if (create.status !== 0) throw new Error(`redis-cli --cluster create failed (${create.status}): ${create.stdout}${create.stderr}`);
    for (const p of ports) {
      await waitFor(async () => (await redisCommand(p, ['CLUSTER', 'INFO'])).includes('cluster_state:ok'), `cluster_state:ok on port ${p}`, 20_000);
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { ports, rootNodes: ports.map((p) => ({ url: `redis://127.0.0.1:${p}` })), stop };
}

/** Removes every key under `prefix` on the shared server (which is never flushed). */
export async function dropPrefix(prefix: string, url = SHARED_REDIS_URL): Promise<void> {
  const { createClient } = await import('@redis/client');
  const client = createClient({ url });
  client.on('error', () => {});
  await client.connect();
  try {
    for await (const keys of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) {
      if (keys.length > 0) await client.unlink(keys);
    }
  } finally {
    await client.close();
  }
}
