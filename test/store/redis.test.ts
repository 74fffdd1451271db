/**
 * The store contract on real Redis: the shared server (a random key prefix per store) and a
 * private three-master Redis Cluster. Without Redis: skipped loudly, or failed when CI=true.
 */
import { after, before, describe } from 'node:test';
import { redisStore } from '../../src/store/redis.js';
import { randomPrefix, redisOrSkip, SHARED_REDIS_URL, startRedisCluster, type RedisCluster } from '../helpers/redis.js';
import { storeContract } from './contract.js';

const available = await redisOrSkip('the Redis store contract');

if (available) {
  storeContract('redis (standalone)', (o) => redisStore({ url: SHARED_REDIS_URL, keyPrefix: randomPrefix('contract'), ...o }));

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
