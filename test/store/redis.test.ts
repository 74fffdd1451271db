/**
 * The store contract on real Redis: the shared server (a random key prefix per store, its
 * keys removed afterwards) and a private three-master Redis Cluster. Without Redis:
 * skipped loudly, or failed when CI=true.
 */
import { after, before, describe } from 'node:test';
import { createClient } from '@redis/client';
import { redisStore } from '../../src/store/redis/index.js';
import { randomPrefix, redisOrSkip, SHARED_REDIS_URL, startRedisCluster, type RedisCluster } from '../helpers/redis.js';
import { storeContract } from './contract.js';

const available = await redisOrSkip('the Redis store contract');

if (available) {
  const prefixes: string[] = [];
  after(async () => {
    // The shared server is never flushed: remove exactly the keys these tests made.
    const client = createClient({ url: SHARED_REDIS_URL });
    client.on('error', () => {});
    await client.connect();
    try {
      for (const prefix of prefixes) {
        for await (const keys of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) {
          if (keys.length > 0) await client.unlink(keys);
        }
      }
    } finally {
      await client.close();
    }
  });

  storeContract('redis (standalone)', (o) => {
    const keyPrefix = randomPrefix('contract');
    prefixes.push(keyPrefix);
    return redisStore({ url: SHARED_REDIS_URL, keyPrefix, ...o });
  });

  describe('on a three-master Redis Cluster', () => {
    let cluster: RedisCluster | undefined;
    before(async () => {
      cluster = await startRedisCluster(3);
    });
    after(async () => {
      await cluster?.stop();
    });
    storeContract('redis (cluster)', (o) => {
      if (!cluster) throw new Error('cluster not started');
      return redisStore({ cluster: { rootNodes: cluster.rootNodes }, keyPrefix: randomPrefix('cluster'), ...o });
    });
  });
}
