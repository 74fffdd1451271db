/**
 * `serve --store` values naming a Redis: a standalone server or a Redis Cluster, with the
 * options that replicas of one deployment must agree on.
 *
 *   redis://[user:pass@]HOST:PORT[/DB][?prefix=P&leaseMs=N]
 *   rediss://…                       (TLS)
 *   redis-cluster://H1:P1,H2:P2[,…][?prefix=P&leaseMs=N]   (any reachable nodes of the cluster)
 */
import { redisStore } from '../store/redis/index.js';
import type { Store } from '../store/types.js';
import type { ClusterOptions } from '../server/options.js';
import { UsageError } from './usage.js';

export interface RedisSpec {
  store: Store;
  cluster: ClusterOptions;
}

/** Is `spec` one of the Redis forms? */
export function isRedisSpec(spec: string): boolean {
  return /^(rediss?|redis-cluster):\/\//.test(spec);
}

/** Connects the store a Redis `--store` value names. */
export async function openRedisStore(spec: string): Promise<RedisSpec> {
  const query = spec.indexOf('?');
  const base = query < 0 ? spec : spec.slice(0, query);
  const params = new URLSearchParams(query < 0 ? '' : spec.slice(query + 1));
  for (const key of params.keys()) {
    if (key !== 'prefix' && key !== 'leaseMs') throw new UsageError(`Unknown option ${JSON.stringify(key)} in --store: expected prefix or leaseMs`);
  }
  const cluster: ClusterOptions = {};
  const leaseMs = params.get('leaseMs');
  if (leaseMs !== null) {
    const n = Number(leaseMs);
    if (!Number.isInteger(n) || n < 30) throw new UsageError(`leaseMs in --store must be an integer of at least 30, got ${leaseMs}`);
    cluster.leaseMs = n;
  }
  const common = { keyPrefix: params.get('prefix') ?? undefined };
  if (base.startsWith('redis-cluster://')) {
    const nodes = base.slice('redis-cluster://'.length).replace(/\/$/, '').split(',').filter((n) => n !== '');
    if (nodes.length === 0 || nodes.some((n) => !/^[^\s/:]+:\d+$/.test(n))) {
      throw new UsageError(`--store ${JSON.stringify(spec)}: expected redis-cluster://HOST:PORT[,HOST:PORT…]`);
    }
    return { store: await redisStore({ cluster: { rootNodes: nodes.map((n) => ({ url: `redis://${n}` })) }, ...common }), cluster };
  }
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    throw new UsageError(`--store ${JSON.stringify(spec)} is not a URL: expected redis://HOST:PORT[/DB]`);
  }
  if (url.hostname === '' || !/^(\/\d*)?$/.test(url.pathname)) throw new UsageError(`--store ${JSON.stringify(spec)}: expected redis://HOST:PORT[/DB]`);
  return { store: await redisStore({ url: base, ...common }), cluster };
}
