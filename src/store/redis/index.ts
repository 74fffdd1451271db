/**
 * Redis store: sessions, logs, leases and notifications shared by every replica of a
 * server, on a standalone Redis (7+) or a Redis Cluster, unchanged. See docs/stores.md.
 */
import { ContinuityError } from '../../protocol/errors.js';
import { Keys } from './keys.js';
import { openLink, type RedisTarget } from './link.js';
import { RedisBus } from './bus.js';
import { RedisEventLog } from './log.js';
import { RedisOwnership, RedisSessionStore } from './sessions.js';
import { WriteFloors } from './floors.js';
import { resolveRetention } from '../rules.js';
import { Agreement } from './agreement.js';
import { MIN_LEASE_MS, parseRedisUrl, redactUrl } from './url.js';
import type { RetentionOptions, Store } from '../types.js';

export type { RedisClientLike, RedisTarget } from './link.js';
export { redisServerEventBus, MAX_CHANGE_EVENT_BYTES, type ChangeEvent, type RedisServerEventBus, type RedisServerEventBusOptions } from './event-bus.js';
export { redactUrl } from './url.js';

/** Options of {@link redisStore}: where Redis is ({@link RedisTarget}), plus these. */
export interface RedisStoreCommonOptions {
  /**
   * Prefix of every key and channel (default `'mcpc:'`, or the url's `?prefix=`); replicas of
   * one server must share it.
   */
  keyPrefix?: string | undefined;
  /**
   * The replicas' ownership lease, ms (or the url's `?leaseMs=`): the endpoint uses it as
   * `cluster.leaseMs`, and it is compared with the running replicas' when the store opens.
   */
  leaseMs?: number | undefined;
  /**
   * A name the replicas of one deployment share (or the url's `?deployment=`). Given, the
   * prefix and lease are compared across every replica of that name, whatever its prefix;
   * otherwise among the replicas on the same prefix (two prefixes are two deployments).
   */
  deployment?: string | undefined;
  /** Per-stream retention; applied inside each append's script. */
  retention?: RetentionOptions | undefined;
  /**
   * Expiry of an idle session's keys in Redis, ms (default 24 h; 0: never). A backstop for
   * sessions no replica sweeps any more; keep it longer than the endpoint's idle timeout.
   * Every key of a session expires at the same moment.
   */
  sessionTtlMs?: number | undefined;
  /** Give up on a command after this long, with `store-unavailable` (default 2,000 ms). */
  commandTimeoutMs?: number | undefined;
  /** Give up on the first connection after this long, with `store-unavailable` (default 5,000 ms). */
  connectTimeoutMs?: number | undefined;
  /** Longest wait between reconnection attempts (default 2,000 ms); attempts never stop. */
  maxReconnectDelayMs?: number | undefined;
  /** Connection errors as they happen (commands fail with `store-unavailable` meanwhile). Default: ignored. */
  onError?: ((error: Error) => void) | undefined;
  /** Clock for age-based retention (tests); default `Date.now`. Leases use the Redis server's clock. */
  now?: (() => number) | undefined;
  /**
   * Durability: an appended event reaches clients only once this many Redis replicas
   * acknowledged it (`WAIT`), so a failover to one of them cannot take back an event a
   * client already has. Default 0: Redis replication is asynchronous, and a failover may
   * lose the last writes (the store notices and ends the sessions concerned, see
   * docs/clusters.md). Costs a round trip to the replicas per append batch.
   */
  waitReplicas?: number | undefined;
  /**
   * How long an append waits for `waitReplicas`, ms (default 1,000, or half of
   * `commandTimeoutMs` if that is less; it must be shorter). Past it the append
   * fails with `store-unavailable` (the event is not delivered; its session is let go).
   */
  waitTimeoutMs?: number | undefined;
}

export type RedisStoreOptions = RedisTarget & RedisStoreCommonOptions;

const DAY = 24 * 60 * 60 * 1000;

function positive(name: string, value: number | undefined, fallback: number, { allowZero = false }: { allowZero?: boolean } = {}): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || (!allowZero && value === 0)) {
    throw new RangeError(`redisStore: ${name} must be a ${allowZero ? 'non-negative' : 'positive'} number, got ${String(value)}`);
  }
  return Math.floor(value);
}

/**
 * The options with the url's query folded in: the url's options and the named ones must
 * agree (one deployment cannot be told two prefixes), and node-redis gets the bare address.
 */
function resolve(o: RedisStoreOptions): RedisStoreOptions {
  if (typeof o !== 'object' || o === null) throw new TypeError('redisStore: options must be an object with url, cluster or client');
  if (o.url === undefined) return o;
  if (!/^rediss?:\/\//.test(String(o.url)))
    throw new TypeError(`redisStore: url must start with redis:// or rediss://, got ${JSON.stringify(redactUrl(String(o.url)))}`);
  let parsed: ReturnType<typeof parseRedisUrl>;
  try {
    parsed = parseRedisUrl(o.url);
  } catch (error) {
    throw new TypeError(`redisStore: ${(error as Error).message}`);
  }
  const out: RedisStoreOptions = { ...o, url: parsed.address };
  for (const [name, value] of [
    ['keyPrefix', parsed.options.keyPrefix],
    ['leaseMs', parsed.options.leaseMs],
    ['deployment', parsed.options.deployment],
  ] as const) {
    if (value === undefined) continue;
    if (o[name] !== undefined && o[name] !== value) {
      throw new TypeError(`redisStore: ${name} ${JSON.stringify(o[name])} disagrees with the url's ${JSON.stringify(value)}; give it once`);
    }
    Object.assign(out, { [name]: value });
  }
  return out;
}

function validate(o: RedisStoreOptions): void {
  const given = [o.url !== undefined, o.cluster !== undefined, o.client !== undefined].filter(Boolean).length;
  if (given !== 1) throw new TypeError('redisStore: give exactly one of url, cluster ({ rootNodes }) or client');
  if (o.cluster !== undefined && !(Array.isArray(o.cluster.rootNodes) && o.cluster.rootNodes.length > 0)) {
    throw new TypeError('redisStore: cluster.rootNodes must be a non-empty array of { url }');
  }
  if (o.keyPrefix !== undefined && (typeof o.keyPrefix !== 'string' || /[{}]/.test(o.keyPrefix))) {
    throw new TypeError('redisStore: keyPrefix must be a string without { or }');
  }
  if (o.leaseMs !== undefined && !(Number.isInteger(o.leaseMs) && o.leaseMs >= MIN_LEASE_MS)) {
    throw new RangeError(`redisStore: leaseMs must be an integer of at least ${MIN_LEASE_MS}, got ${String(o.leaseMs)}`);
  }
  if (o.deployment !== undefined && !(typeof o.deployment === 'string' && /^[\w.:-]{1,100}$/.test(o.deployment))) {
    throw new TypeError(`redisStore: deployment must be 1-100 letters, digits, '.', ':', '_' or '-', got ${JSON.stringify(o.deployment)}`);
  }
}

/**
 * Connects to Redis and returns a store shared by every replica that uses the same Redis
 * and key prefix. Rejects with `store-unavailable` when Redis cannot be reached within
 * `connectTimeoutMs`; afterwards every command fails fast with `store-unavailable`
 * (retryable) while Redis is unreachable, and the store reconnects in the background.
 *
 * @example
 * ```ts
 * import { redisStore } from 'mcp-continuity/stores/redis';
 * const store = await redisStore({ url: 'redis://127.0.0.1:6379?prefix=app1:&leaseMs=3000' });
 * // Redis Cluster: await redisStore({ cluster: { rootNodes: [{ url: 'redis://10.0.0.1:7000' }] } });
 * ```
 */
export async function redisStore(given: RedisStoreOptions): Promise<Store> {
  const options = resolve(given);
  validate(options);
  const retention = resolveRetention(options.retention);
  const ttlMs = positive('sessionTtlMs', options.sessionTtlMs, DAY, { allowZero: true });
  const onError = options.onError ?? (() => {});
  const commandTimeoutMs = positive('commandTimeoutMs', options.commandTimeoutMs, 2_000);
  const waitReplicas = positive('waitReplicas', options.waitReplicas, 0, { allowZero: true });
  const waitTimeoutMs = positive('waitTimeoutMs', options.waitTimeoutMs, Math.min(1_000, commandTimeoutMs / 2));
  if (waitTimeoutMs >= commandTimeoutMs) {
    throw new RangeError(`redisStore: waitTimeoutMs (${waitTimeoutMs}) must be shorter than commandTimeoutMs (${commandTimeoutMs})`);
  }
  const link = await openLink(options, {
    connectTimeoutMs: positive('connectTimeoutMs', options.connectTimeoutMs, 5_000),
    commandTimeoutMs,
    maxReconnectDelayMs: positive('maxReconnectDelayMs', options.maxReconnectDelayMs, 2_000),
    onError,
  });
  const keys = new Keys(options.keyPrefix ?? 'mcpc:');
  try {
    // Sharded pub/sub and XADD with explicit IDs in scripts need Redis 7.
    const probe = keys.tail('probe');
    await link.command(probe, ['SPUBLISH', probe, '']);
  } catch (error) {
    await link.close();
    if (error instanceof ContinuityError && error.code === 'store-unavailable') throw error;
    throw new ContinuityError(
      'store-open-failed',
      `redisStore: this Redis does not support sharded pub/sub (SPUBLISH); Redis 7 or later is required: ${(error as Error).message}`,
      undefined,
      { cause: error },
    );
  }
  const floors = new WriteFloors();
  const replicate =
    waitReplicas === 0
      ? undefined
      : async (session: string): Promise<void> => {
          // WAIT runs on the connection to the session's node and covers every write sent on it so far.
          const acked = Number(await link.command(keys.record(session), ['WAIT', String(waitReplicas), String(waitTimeoutMs)]));
          if (acked < waitReplicas) {
            throw new ContinuityError('store-unavailable', `Only ${acked} of ${waitReplicas} Redis replicas acknowledged the write within ${waitTimeoutMs} ms`);
          }
        };
  let agreement: Agreement;
  try {
    const registry = options.deployment === undefined ? `${keys.prefix}replicas` : `mcpc-deployment:{${options.deployment}}`;
    agreement = await Agreement.join(link, registry, { prefix: keys.prefix, leaseMs: options.leaseMs ?? null }, options.onError ?? (() => {}));
  } catch (error) {
    await link.close();
    throw error;
  }
  return {
    name: 'redis',
    durable: true,
    shared: true,
    sessions: new RedisSessionStore(link, keys, ttlMs, floors),
    log: new RedisEventLog({ link, keys, retention, now: options.now ?? Date.now, ttlMs, floors, replicate }),
    ownership: new RedisOwnership(link, keys, ttlMs, floors, onError),
    bus: new RedisBus(link, keys),
    ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
    close: async () => {
      await agreement.leave();
      await link.close();
    },
  };
}
