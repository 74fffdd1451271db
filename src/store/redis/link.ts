/**
 * The Redis store's connection: one small surface (`command`, `script`, sharded pub/sub)
 * over a node-redis standalone client or cluster, so the store code is the same on both.
 *
 * Why node-redis (`@redis/client`): it is the client maintained by Redis itself, written in
 * TypeScript, and treats Redis Cluster and sharded pub/sub (SSUBSCRIBE/SPUBLISH, one
 * connection per shard, resubscribed after failover) as first-class.
 *
 * Faults fail fast: no offline queue (a command while disconnected is refused at once), a
 * per-command timeout (a stalled server cannot hold a request), and reconnection with a
 * capped exponential backoff. Every such failure surfaces as a retryable
 * `store-unavailable`. node-redis types stay inside this file: the exported signatures of
 * the store use structural types of our own.
 */
import { createHash } from 'node:crypto';
import { createClient, createCluster, ErrorReply } from '@redis/client';
import { ContinuityError } from '../../protocol/errors.js';

/** A node-redis client or cluster created by the caller (structural, so no third-party types leak). */
export interface RedisClientLike {
  sendCommand(...args: never[]): Promise<unknown>;
  sSubscribe(...args: never[]): Promise<unknown>;
  sUnsubscribe(...args: never[]): Promise<unknown>;
  duplicate(...args: never[]): unknown;
  readonly isOpen: boolean;
}

/** How to reach Redis. */
export type RedisTarget =
  /** A standalone server: `redis://[user:password@]host:port[/db]` or `rediss://…`. */
  | { url: string; cluster?: undefined; client?: undefined }
  /** A Redis Cluster: some of its nodes (the rest are discovered). */
  | { cluster: { rootNodes: ReadonlyArray<{ url: string }> }; url?: undefined; client?: undefined }
  /**
   * A connected node-redis client (`createClient`) or cluster (`createCluster`) you own: the
   * store does not close it. For a standalone client, the store opens one duplicate
   * connection for pub/sub (a subscribed connection cannot run commands).
   */
  | { client: RedisClientLike; url?: undefined; cluster?: undefined };

export interface LinkOptions {
  connectTimeoutMs: number;
  commandTimeoutMs: number;
  maxReconnectDelayMs: number;
  onError: (error: Error) => void;
}

export type Listener = (message: string, channel: string) => void;

/** A Lua script with its SHA1, so calls send the hash and load the source only once per node. */
export class Script {
  readonly sha: string;
  constructor(readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }
}

/** Reply errors of our scripts: `MCPC_<KIND> message`. */
const SCRIPT_ERROR = /^MCPC_(CONFLICT|FENCED|REGRESSED) ?(.*)$/s;
/** Reply errors that mean "not now" rather than "wrong". */
const TRANSIENT = /^(LOADING|BUSY|OOM|READONLY|CLUSTERDOWN|TRYAGAIN|MASTERDOWN|NOREPLICAS|MISCONF)\b/;

/** Maps anything a command can throw to the store's typed errors. */
export function mapError(error: unknown, what: string): Error {
  if (error instanceof ContinuityError) return error;
  if (error instanceof ErrorReply) {
    const m = SCRIPT_ERROR.exec(error.message);
    if (m) {
      if (m[1] === 'FENCED') return new ContinuityError('store-fenced', undefined, { current: Number(m[2]) });
      if (m[1] === 'REGRESSED') return new ContinuityError('store-regressed', `Redis went back in time: ${m[2] ?? ''}; the session was ended`);
      return new ContinuityError('store-conflict', m[2] || undefined);
    }
    if (!TRANSIENT.test(error.message)) return error;
  }
  const message = error instanceof Error ? error.message : String(error);
  return new ContinuityError('store-unavailable', `Redis store unavailable (${what}): ${message}`, undefined, { cause: error });
}

/** What the store needs from a connection. */
export interface Link {
  /** Runs one command on the node that owns `key`. */
  command(key: string, args: readonly string[]): Promise<unknown>;
  /** Runs a script on the node that owns `keys[0]` (all keys must share one hash slot). */
  script(script: Script, keys: readonly string[], args: readonly string[]): Promise<unknown>;
  sSubscribe(channel: string, listener: Listener): Promise<void>;
  sUnsubscribe(channel: string, listener: Listener): Promise<void>;
  /**
   * Calls `listener` whenever a pub/sub connection is ready again after the link was up
   * (node-redis resubscribes by itself; messages published meanwhile were lost).
   */
  onReconnect(listener: () => void): void;
  close(): Promise<void>;
}

interface Driver {
  send(key: string, args: string[]): Promise<unknown>;
  sub: { sSubscribe(channel: string, listener: Listener): Promise<void>; sUnsubscribe(channel: string, listener: Listener): Promise<void> };
  /** The emitter and event that say "a pub/sub connection is ready". */
  ready: { on(event: string, listener: () => void): unknown };
  readyEvent: string;
  close(): Promise<void>;
}

function backoff(maxDelayMs: number) {
  // Capped exponential backoff with jitter: retries forever (Redis may come back), never hammers it.
  return (retries: number): number => Math.min(maxDelayMs, 50 * 2 ** Math.min(retries, 10)) * (0.5 + Math.random() / 2);
}

/**
 * `promise`, or a `store-unavailable` after `ms`. Our own timer: node-redis 6's per-command
 * `timeout` option did not fire against a stopped server here. A write that timed out may
 * still be applied when the server wakes up; the stream head says whether it was.
 */
function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ContinuityError('store-unavailable', `Redis store unavailable (${what}): no reply within ${ms} ms`)), ms);
  });
  promise.catch(() => {}); // settles later, or when the connection closes
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function connectWithin(connect: () => Promise<unknown>, destroy: () => void, timeoutMs: number, where: string): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      connect(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new ContinuityError('store-unavailable', `no connection within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
  } catch (error) {
    destroy();
    throw new ContinuityError('store-unavailable', `Redis store: cannot connect to ${where}: ${(error as Error).message}`, undefined, { cause: error });
  } finally {
    clearTimeout(timer);
  }
}

/** Hides credentials when naming a URL in an error. */
function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(invalid URL)';
  }
}

function driverSocket(o: LinkOptions) {
  return { connectTimeout: o.connectTimeoutMs, reconnectStrategy: backoff(o.maxReconnectDelayMs) };
}

/** A client or cluster the application built: used as it is; a plain client gets a pub/sub duplicate of ours. */
async function givenDriver(given: object, o: LinkOptions): Promise<Driver> {
  if ('masters' in given) {
    const cluster = given as ReturnType<typeof createCluster>;
    return { send: (key, args) => cluster.sendCommand(key, false, args), sub: cluster, ready: cluster, readyEvent: 'node-ready', close: async () => {} };
  }
  const client = given as ReturnType<typeof createClient>;
  const sub = client.duplicate();
  sub.on('error', (error: Error) => o.onError(error));
  await connectWithin(
    () => sub.connect(),
    () => sub.destroy(),
    o.connectTimeoutMs,
    'the given client (pub/sub duplicate)',
  );
  return {
    send: (_key, args) => client.sendCommand(args),
    sub,
    ready: sub,
    readyEvent: 'ready',
    close: async () => void (await sub.close().catch(() => sub.destroy())),
  };
}

async function clusterDriver(rootNodes: readonly { url: string }[], o: LinkOptions): Promise<Driver> {
  const socket = driverSocket(o);
  const cluster = createCluster({
    rootNodes: rootNodes.map((n) => ({ url: n.url, socket })),
    defaults: { disableOfflineQueue: true, socket },
  });
  cluster.on('error', (error: Error) => o.onError(error));
  const where = rootNodes.map((n) => redact(n.url)).join(', ');
  await connectWithin(
    () => cluster.connect(),
    () => void cluster.destroy(),
    o.connectTimeoutMs,
    `the cluster at ${where}`,
  );
  return {
    send: (key, args) => cluster.sendCommand(key, false, args),
    sub: cluster,
    ready: cluster,
    readyEvent: 'node-ready',
    close: async () => void (await cluster.close().catch(() => cluster.destroy())),
  };
}

async function urlDriver(url: string, o: LinkOptions): Promise<Driver> {
  const onError = (error: Error): void => o.onError(error);
  // No offline queue: a command while disconnected fails at once (store-unavailable), never waits.
  const client = createClient({ url, socket: driverSocket(o), disableOfflineQueue: true });
  client.on('error', onError);
  await connectWithin(
    () => client.connect(),
    () => client.destroy(),
    o.connectTimeoutMs,
    redact(url),
  );
  const sub = client.duplicate();
  sub.on('error', onError);
  await connectWithin(
    () => sub.connect(),
    () => {
      sub.destroy();
      client.destroy();
    },
    o.connectTimeoutMs,
    `${redact(url)} (pub/sub)`,
  );
  return {
    send: (_key, args) => client.sendCommand(args),
    sub,
    ready: sub,
    readyEvent: 'ready',
    close: async () => {
      await Promise.all([client.close().catch(() => client.destroy()), sub.close().catch(() => sub.destroy())]);
    },
  };
}

function openDriver(target: RedisTarget, o: LinkOptions): Promise<Driver> {
  if (target.client) return givenDriver(target.client, o);
  if (target.cluster) return clusterDriver(target.cluster.rootNodes, o);
  return urlDriver(target.url, o);
}

/** Connects (within `connectTimeoutMs`, else `store-unavailable`) and returns the link. */
export async function openLink(target: RedisTarget, options: LinkOptions): Promise<Link> {
  const d = await openDriver(target, options);
  let closed = false;
  const guard = (): void => {
    if (closed) throw new ContinuityError('store-unavailable', 'Redis store is closed');
  };
  const command = async (key: string, args: readonly string[]): Promise<unknown> => {
    guard();
    try {
      return await withTimeout(d.send(key, [...args]), options.commandTimeoutMs, args[0] ?? '');
    } catch (error) {
      throw mapError(error, args[0] ?? '');
    }
  };
  return {
    command,
    async script(script, keys, args) {
      const tail = [String(keys.length), ...keys, ...args];
      const key = keys[0] ?? '';
      guard();
      try {
        return await withTimeout(d.send(key, ['EVALSHA', script.sha, ...tail]), options.commandTimeoutMs, 'EVALSHA');
      } catch (error) {
        // First use on this node (or after a restart or failover): send the source once.
        if (!(error instanceof ErrorReply && error.message.startsWith('NOSCRIPT'))) throw mapError(error, 'EVALSHA');
      }
      return command(key, ['EVAL', script.source, ...tail]);
    },
    async sSubscribe(channel, listener) {
      guard();
      try {
        await withTimeout(d.sub.sSubscribe(channel, listener), options.commandTimeoutMs, 'SSUBSCRIBE');
      } catch (error) {
        throw mapError(error, 'SSUBSCRIBE');
      }
    },
    async sUnsubscribe(channel, listener) {
      if (closed) return;
      try {
        await d.sub.sUnsubscribe(channel, listener);
      } catch (error) {
        throw mapError(error, 'SUNSUBSCRIBE');
      }
    },
    onReconnect(listener) {
      d.ready.on(d.readyEvent, () => {
        if (!closed) listener();
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      await d.close();
    },
  };
}
