/**
 * A Redis that is full (`maxmemory` with `noeviction`) refuses writes with OOM. The Redis
 * store has no budget of its own (Redis's `maxmemory` is the bound), so this is what a
 * client that fills it meets: the call's stream ends without a result, the process serves
 * on, and the failure reaches `onError` as a typed `store-unavailable`. Once Redis has
 * room again, a resume of the cut stream gets exactly the events that were logged after
 * the client's cursor, then `request-abandoned` for the call: never a gap, never a wait
 * for a result no one will send.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isContinuityError } from '../../src/protocol/errors.js';
import { redisStore } from '../../src/store/redis/index.js';
import type { Store } from '../../src/store/types.js';
import { startFixture, type Fixture } from '../helpers/fixture.js';
import { randomPrefix, redisCommand, redisOrSkip, startRedis, type RedisServer } from '../helpers/redis.js';
import { initialize, messages, rpc, send, sessionHeaders } from '../helpers/sse-client.js';

const available = await redisOrSkip('the full-Redis tests');

type Message = {
  id?: unknown;
  method?: string;
  params?: { data?: { seq?: number } };
  result?: unknown;
  error?: { message: string; data?: { reason?: string } };
};
const seqs = (all: Message[]): number[] => all.filter((m) => m.method === 'notifications/message').map((m) => m.params?.data?.seq ?? -1);

describe('a full Redis (maxmemory, noeviction)', { skip: !available }, () => {
  let redis: RedisServer;
  let f: Fixture;
  let store: Store;
  before(async () => {
    redis = await startRedis(['--maxmemory', '3mb', '--maxmemory-policy', 'noeviction']);
    store = await redisStore({ url: redis.url, keyPrefix: randomPrefix('full') });
    f = await startFixture({ store, keepAliveMs: 0 });
  });
  after(async () => {
    await f?.close();
    await store?.close();
    await redis?.stop();
  });

  it('a call that fills it ends without a result; once there is room, its resume gets the logged rest and request-abandoned', async () => {
    const h = await initialize(f.url);
    const call = rpc('tools/call', { name: 'emit', arguments: { count: 400, bytes: 16_384 } });
    // 400 × 16 KiB is twice what Redis may hold.
    const cut = await send(f.url, { body: call, headers: sessionHeaders(h) });
    const first = messages(cut.events) as Message[];
    const got = seqs(first);
    assert.equal(cut.status, 200);
    assert.ok(got.length > 0 && got.length < 400, `a prefix of the call's events: ${got.length}`);
    assert.deepEqual(
      got,
      Array.from({ length: got.length }, (_, i) => i + 1),
      'in order, none missing',
    );
    assert.ok(
      first.every((m) => m.result === undefined && m.error === undefined),
      'no result for a call whose events could not all be logged',
    );
    assert.ok(
      f.errors.length > 0 && f.errors.every((e) => isContinuityError(e, 'store-unavailable')),
      `typed store failures: ${f.errors.map((e) => e.message).join('; ')}`,
    );
    assert.match(String((f.errors[0]?.cause as Error | undefined)?.message), /OOM/, 'the operator sees why');

    await redisCommand(redis.port, ['CONFIG', 'SET', 'maxmemory', '0']);
    const resumed = await send(f.url, { headers: sessionHeaders(h, { 'last-event-id': cut.events.at(-1)?.id ?? '' }) });
    assert.equal(resumed.status, 200);
    const rest = messages(resumed.events) as Message[];
    const more = seqs(rest);
    assert.deepEqual(
      more,
      Array.from({ length: more.length }, (_, i) => got.length + i + 1),
      'exactly the logged events after the cursor',
    );
    const answer = rest.at(-1);
    assert.equal(answer?.id, call.id, 'the call is answered');
    assert.equal(answer?.error?.data?.reason, 'request-abandoned', 'as abandoned: its tool stopped with the failed session');

    // The session serves on.
    const after = await send(f.url, { body: rpc('tools/call', { name: 'emit', arguments: { count: 3 } }), headers: sessionHeaders(h) });
    assert.deepEqual(seqs(messages(after.events) as Message[]), [1, 2, 3]);
  });
});
