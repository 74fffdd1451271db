/**
 * `serve --store` values naming a Redis: a standalone server or a Redis Cluster, with the
 * options that replicas of one deployment must agree on. The query is read by the same
 * code as `redisStore({ url })`'s, so the CLI and the library cannot disagree on a URL.
 *
 *   redis://[user:pass@]HOST:PORT[/DB][?prefix=P&leaseMs=N&deployment=NAME]
 *   rediss://…                       (TLS)
 *   redis-cluster://H1:P1,H2:P2[,…][?prefix=P&leaseMs=N&deployment=NAME]   (any reachable nodes of the cluster)
 */
import { redisStore } from '../store/redis/index.js';
import { parseRedisUrl, redactUrl } from '../store/redis/url.js';
import type { Store } from '../store/types.js';
import type { ClusterOptions } from '../server/options.js';
import { UsageError } from './usage.js';

export interface RedisSpec {
  store: Store;
  /** The endpoint's cluster options (the lease travels with the store: `store.leaseMs`). */
  cluster: ClusterOptions;
}

/** Is `spec` one of the Redis forms? */
export function isRedisSpec(spec: string): boolean {
  return /^(rediss?|redis-cluster):\/\//.test(spec);
}

/** Connects the store a Redis `--store` value names. */
export async function openRedisStore(spec: string): Promise<RedisSpec> {
  const shown = JSON.stringify(redactUrl(spec));
  let parsed: ReturnType<typeof parseRedisUrl>;
  try {
    parsed = parseRedisUrl(spec);
  } catch (error) {
    throw new UsageError(`--store: ${(error as Error).message}`);
  }
  const { address: base, options } = parsed;
  if (base.startsWith('redis-cluster://')) {
    const nodes = base
      .slice('redis-cluster://'.length)
      .replace(/\/$/, '')
      .split(',')
      .filter((n) => n !== '');
    if (nodes.length === 0 || nodes.some((n) => !/^[^\s/:]+:\d+$/.test(n))) {
      throw new UsageError(`--store ${shown}: expected redis-cluster://HOST:PORT[,HOST:PORT…]`);
    }
    return { store: await redisStore({ cluster: { rootNodes: nodes.map((n) => ({ url: `redis://${n}` })) }, ...options }), cluster: {} };
  }
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    throw new UsageError(`--store ${shown} is not a URL: expected redis://HOST:PORT[/DB]`);
  }
  if (url.hostname === '' || !/^(\/\d*)?$/.test(url.pathname)) throw new UsageError(`--store ${shown}: expected redis://HOST:PORT[/DB]`);
  // The whole spec: redisStore reads the same query itself.
  return { store: await redisStore({ url: spec }), cluster: {} };
}
