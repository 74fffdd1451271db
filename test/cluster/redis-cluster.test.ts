/**
 * `--store` values naming Redis, and two real `serve` replicas on a three-master Redis
 * Cluster named with `redis-cluster://`: a POST through the non-owner and a resume on the
 * other replica, so session keys, scripts and sharded pub/sub work across slots.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isRedisSpec, openRedisStore } from '../../src/cli/store-spec.js';
import { UsageError } from '../../src/cli/usage.js';
import { startRedisCluster, type RedisCluster } from '../helpers/redis.js';
import { startReplica, type Replica } from '../helpers/replicas.js';
import { initialize, messages, rpc, send, sessionHeaders } from '../helpers/sse-client.js';

describe('--store for Redis', () => {
  it('recognises the Redis forms and refuses malformed ones with a usage error', async () => {
    assert.ok(isRedisSpec('redis://h:1/0') && isRedisSpec('rediss://h:1') && isRedisSpec('redis-cluster://a:1,b:2'));
    assert.ok(!isRedisSpec('sqlite:./x.db') && !isRedisSpec('memory'));
    for (const bad of [
      'redis://h:6379?nope=1',
      'redis://h:6379?leaseMs=5',
      'redis://h:6379?leaseMs=abc',
      'redis-cluster://',
      'redis-cluster://a,b:2',
      'redis://h:6379/x/y',
    ]) {
      await assert.rejects(openRedisStore(bad), UsageError, bad);
    }
  });
});

describe('two replicas on a three-master Redis Cluster', () => {
  let cluster: RedisCluster;
  const replicas: Replica[] = [];
  before(async () => {
    cluster = await startRedisCluster(3);
    const spec = `redis-cluster://${cluster.ports.map((p) => `127.0.0.1:${p}`).join(',')}?leaseMs=1000&prefix=rc:`;
    replicas.push(...(await Promise.all([0, 1].map(() => startReplica(spec)))));
  });
  after(async () => {
    await Promise.all(replicas.map((r) => r.kill('SIGKILL')));
    await cluster?.stop();
  });

  it('sessions in different slots: a call through the non-owner, resumed on the other replica', async () => {
    const [a, b] = replicas.map((r) => r.url) as [URL, URL];
    for (let i = 0; i < 4; i++) {
      const h = await initialize(a);
      const call = rpc('tools/call', { name: 'emit', arguments: { count: 30 } });
      const full = await send(b, { body: call, headers: sessionHeaders(h) });
      assert.equal(full.status, 200, full.text);
      assert.deepEqual((messages(full.events).at(-1) as { id?: unknown }).id, call.id);
      const ids = full.events.map((e) => e.id as string);
      const resumed = await send(a, { headers: sessionHeaders(h, { 'last-event-id': ids[9] as string }) });
      assert.deepEqual(
        resumed.events.map((e) => e.id),
        ids.slice(10),
      );
    }
  });
});
