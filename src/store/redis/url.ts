/**
 * The options a Redis URL carries, read the same way by `redisStore({ url })` and by
 * `serve --store`, so the library and the CLI cannot understand one URL two ways:
 *
 *   redis[s]://[user:password@]HOST:PORT[/DB][?prefix=P&leaseMs=N&deployment=NAME]
 *
 * Pure: no I/O. Also the one place that hides a URL's password for printing.
 */

/** What the query of a Redis URL may set. */
export interface RedisUrlOptions {
  /** `?prefix=`: the key prefix (`keyPrefix`). */
  keyPrefix?: string | undefined;
  /** `?leaseMs=`: the replicas' ownership lease (`cluster.leaseMs`). */
  leaseMs?: number | undefined;
  /** `?deployment=`: a name the replicas of one deployment share, whatever their prefix. */
  deployment?: string | undefined;
}

/** The query options a Redis URL accepts. */
export const REDIS_URL_OPTIONS = ['prefix', 'leaseMs', 'deployment'] as const;

/** The shortest lease the cluster accepts, ms. */
export const MIN_LEASE_MS = 30;

/** Splits `url` into the address node-redis gets and our options; throws a TypeError naming a bad option. */
export function parseRedisUrl(url: string): { address: string; options: RedisUrlOptions } {
  const query = url.indexOf('?');
  const address = query < 0 ? url : url.slice(0, query);
  const params = new URLSearchParams(query < 0 ? '' : url.slice(query + 1));
  const options: RedisUrlOptions = {};
  for (const [key, value] of params) {
    if (!(REDIS_URL_OPTIONS as readonly string[]).includes(key)) {
      throw new TypeError(`unknown option ${JSON.stringify(key)} in the Redis URL ${JSON.stringify(redactUrl(url))}: expected ${REDIS_URL_OPTIONS.join(', ')}`);
    }
    if (params.getAll(key).length > 1) throw new TypeError(`option ${JSON.stringify(key)} is given twice in the Redis URL`);
    if (key === 'prefix') {
      if (/[{}]/.test(value)) throw new TypeError(`prefix in the Redis URL must not contain { or }, got ${JSON.stringify(value)}`);
      options.keyPrefix = value;
    } else if (key === 'leaseMs') {
      const n = Number(value);
      if (!/^\d+$/.test(value) || n < MIN_LEASE_MS)
        throw new TypeError(`leaseMs in the Redis URL must be an integer of at least ${MIN_LEASE_MS}, got ${JSON.stringify(value)}`);
      options.leaseMs = n;
    } else {
      if (!/^[\w.:-]{1,100}$/.test(value))
        throw new TypeError(`deployment in the Redis URL must be 1-100 letters, digits, '.', ':', '_' or '-', got ${JSON.stringify(value)}`);
      options.deployment = value;
    }
  }
  return { address, options };
}

/**
 * `text` with the password of every URL in it replaced by `***`
 * (`redis://:secret@h` → `redis://:***@h`, `rediss://u:p@h` → `rediss://u:***@h`).
 * A user name alone is kept: it names an ACL user, not a secret.
 */
export function redactUrl(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/[^\s/?#@:,]*):[^\s/?#@]*@/gi, '$1:***@');
}
