/**
 * `redisStore({ url })` reads the same query as `serve --store` (prefix, leaseMs,
 * deployment) or refuses it; replicas whose prefix or lease disagree cannot both run.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { redisStore } from '../../src/store/redis/index.js';
import { parseRedisUrl, redactUrl } from '../../src/store/redis/url.js';
import { createEndpoint } from '../../src/server/endpoint.js';
import { isContinuityError } from '../../src/protocol/errors.js';
import type { Store } from '../../src/store/types.js';
import { randomPrefix, redisCommand, redisOrSkip, SHARED_REDIS_URL } from '../helpers/redis.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';

const PORT = Number(new URL(SHARED_REDIS_URL).port || 6379);

describe('the Redis URL (pure)', () => {
  it('reads prefix, leaseMs and deployment, and refuses anything else', () => {
    assert.deepEqual(parseRedisUrl('redis://h:1/2?prefix=app1:&leaseMs=2000&deployment=shop'), {
      address: 'redis://h:1/2',
      options: { keyPrefix: 'app1:', leaseMs: 2000, deployment: 'shop' },
    });
    assert.deepEqual(parseRedisUrl('rediss://h:1'), { address: 'rediss://h:1', options: {} });
    for (const bad of [
      'redis://h?nope=1',
      'redis://h?leaseMs=5',
      'redis://h?leaseMs=1e4',
      'redis://h?prefix=a{b}',
      'redis://h?prefix=a&prefix=b',
      'redis://h?deployment=a%20b',
    ]) {
      assert.throws(() => parseRedisUrl(bad), TypeError, bad);
    }
    assert.throws(
      () => parseRedisUrl('redis://:s3cret@h?x=1'),
      (e: Error) => e.message.includes('redis://:***@h') && !e.message.includes('s3cret'),
    );
  });

  it('redacts passwords, keeps user names', () => {
    assert.equal(redactUrl('redis://:secretpw@h:6379/0?prefix=a:'), 'redis://:***@h:6379/0?prefix=a:');
    assert.equal(
      redactUrl('store: rediss://alice:p%40ss@h:1 and redis-cluster://bob:pw@a:1,b:2'),
      'store: rediss://alice:***@h:1 and redis-cluster://bob:***@a:1,b:2',
    );
    assert.equal(redactUrl('redis://alice@h:1 redis://h:1 sqlite:./x.db'), 'redis://alice@h:1 redis://h:1 sqlite:./x.db');
  });
});

describe('redisStore({ url }) with options in the URL', () => {
  let ok = false;
  const open: Store[] = [];
  before(async () => {
    ok = await redisOrSkip('the Redis URL options tests');
  });
  after(async () => {
    await Promise.all(open.map((s) => s.close()));
  });
  const store = async (options: Parameters<typeof redisStore>[0]): Promise<Store> => {
    const s = await redisStore(options);
    open.push(s);
    return s;
  };

  it('?prefix= is the key prefix', async (t) => {
    if (!ok) return t.skip('no Redis');
    const prefix = randomPrefix('url');
    const s = await store({ url: `${SHARED_REDIS_URL}?prefix=${prefix}` });
    await s.sessions.create({ id: 'sid1', epoch: 'e', pastEpochs: [], protocolVersion: '2025-11-25', initialize: '{}', createdAt: 1, lastActiveAt: 1 });
    assert.match(await redisCommand(PORT, ['EXISTS', `${prefix}{sid1}:rec`]), /^:1/);
    assert.match(await redisCommand(PORT, ['EXISTS', `mcpc:{sid1}:rec`]), /^:0/, 'not under the default prefix');
    await s.sessions.delete('sid1');
  });

  it('refuses unknown options and a keyPrefix that contradicts ?prefix=', async (t) => {
    if (!ok) return t.skip('no Redis');
    await assert.rejects(redisStore({ url: `${SHARED_REDIS_URL}?nope=1` }), TypeError);
    await assert.rejects(redisStore({ url: `${SHARED_REDIS_URL}?prefix=a:`, keyPrefix: 'b:' }), /keyPrefix "b:" disagrees with the url's "a:"/);
    await assert.rejects(redisStore({ url: `${SHARED_REDIS_URL}?leaseMs=2000`, leaseMs: 3000 }), TypeError);
    await assert.rejects(redisStore({ url: SHARED_REDIS_URL, leaseMs: 10 }), RangeError);
  });

  it("?leaseMs= is the endpoint's lease, and an endpoint told another lease refuses", async (t) => {
    if (!ok) return t.skip('no Redis');
    const s = await store({ url: `${SHARED_REDIS_URL}?prefix=${randomPrefix('lease')}&leaseMs=1500` });
    assert.equal(s.leaseMs, 1500);
    const server = (): McpServer => new McpServer({ name: 't', version: '1' });
    assert.throws(() => createEndpoint({ server, store: s, cluster: { leaseMs: 2000 } }), /cluster.leaseMs 2000 disagrees with the store's leaseMs 1500/);
    const endpoint = createEndpoint({ server, store: s, cluster: { leaseMs: 1500 } });
    await endpoint.close();
  });

  it('a second replica with another lease on the same prefix refuses to start; once the first is gone it starts', async (t) => {
    if (!ok) return t.skip('no Redis');
    const prefix = randomPrefix('split');
    const first = await redisStore({ url: `${SHARED_REDIS_URL}?prefix=${prefix}&leaseMs=1000` });
    const same = await store({ url: `${SHARED_REDIS_URL}?prefix=${prefix}&leaseMs=1000` });
    await assert.rejects(redisStore({ url: `${SHARED_REDIS_URL}?prefix=${prefix}&leaseMs=2000` }), (error: unknown) => {
      assert.ok(isContinuityError(error, 'store-config-mismatch'), String(error));
      assert.match(error.message, /leaseMs 2000\) disagrees with a running replica's \(prefix "[^"]+", leaseMs 1000\)/);
      assert.doesNotMatch(error.message, /\n/, 'one line');
      return true;
    });
    await assert.rejects(redisStore({ url: `${SHARED_REDIS_URL}?prefix=${prefix}` }), /leaseMs \(not set on the store\)/, 'no lease is not the same lease');
    await first.close();
    await same.close();
    open.push(await redisStore({ url: `${SHARED_REDIS_URL}?prefix=${prefix}&leaseMs=2000` }));
  });

  it('replicas of one named deployment on two prefixes: the second refuses to start', async (t) => {
    if (!ok) return t.skip('no Redis');
    const deployment = randomPrefix('dep').replace(/[^\w]/g, '');
    await store({ url: `${SHARED_REDIS_URL}?deployment=${deployment}&prefix=app1:` });
    await assert.rejects(redisStore({ url: `${SHARED_REDIS_URL}?deployment=${deployment}` }), (error: unknown) => {
      assert.ok(isContinuityError(error, 'store-config-mismatch'));
      assert.match(error.message, /prefix "mcpc:".*disagrees with a running replica's \(prefix "app1:"/);
      return true;
    });
    await store({ url: `${SHARED_REDIS_URL}?prefix=app1:&deployment=${deployment}` });
  });
});
