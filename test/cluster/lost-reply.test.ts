/**
 * A carried call whose reply is sent while the carrying replica's subscription is away (its
 * connection to Redis was lost and is coming back). Pub/sub delivers at most once: before
 * the fix the reply was dropped and the carrying replica waited for as long as the owner
 * held its lease, that is forever. Now the owner sends an undelivered reply again for a
 * lease period, and the carrying replica stops counting on a reply a lease period after its
 * bus reconnected: every call ends, with its result or with request-abandoned.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { redisStore } from '../../src/store/redis/index.js';
import type { Store } from '../../src/store/types.js';
import { startFixture, type Fixture } from '../helpers/fixture.js';
import { redisCommand, startRedis, type RedisServer } from '../helpers/redis.js';
import { initialize, messages, rpc, send, sessionHeaders } from '../helpers/sse-client.js';
import { waitFor, within } from '../helpers/wait.js';

const LEASE_MS = 300;

/** IDs of the server's pub/sub connections. */
async function pubsubClients(port: number): Promise<Set<string>> {
  const list = await redisCommand(port, ['CLIENT', 'LIST', 'TYPE', 'pubsub']);
  return new Set([...list.matchAll(/\bid=(\d+)\b/g)].map((m) => m[1] as string));
}

describe('a reply sent while the carrying replica is reconnecting to Redis', () => {
  let redis: RedisServer;
  const stores: Store[] = [];
  let owner: Fixture;
  let carrier: Fixture;
  let ownerSubs: Set<string>;

  before(async () => {
    redis = await startRedis();
    const open = async (): Promise<Store> => {
      const store = await redisStore({ url: `${redis.url}?leaseMs=${LEASE_MS}` });
      stores.push(store);
      return store;
    };
    owner = await startFixture({ store: await open() });
    await initialize(owner.url); // subscribes the owner's inbox
    ownerSubs = await pubsubClients(redis.port);
    carrier = await startFixture({ store: await open() });
    // A first carried request subscribes the carrier's inbox.
    const h = await initialize(owner.url);
    assert.equal((await send(carrier.url, { body: rpc('tools/list'), headers: sessionHeaders(h) })).status, 200);
  });
  after(async () => {
    await carrier?.close().catch(() => {});
    await owner?.close().catch(() => {});
    for (const s of stores) await s.close().catch(() => {});
    await redis?.stop();
  });

  /** Keeps the carrier's pub/sub connections away for `ms`: each is killed as soon as it is back. */
  async function keepCarrierAway(ms: number): Promise<number> {
    const until = Date.now() + ms;
    let kills = 0;
    while (Date.now() < until) {
      for (const id of await pubsubClients(redis.port)) {
        if (ownerSubs.has(id)) continue;
        await redisCommand(redis.port, ['CLIENT', 'KILL', 'ID', id]);
        kills++;
      }
    }
    return kills;
  }

  it('every call carried meanwhile ends, with its result or request-abandoned; never waits for the lease', async () => {
    const outcomes: string[] = [];
    for (let run = 0; run < 6; run++) {
      const h = await initialize(owner.url);
      // The carrier's own connection first (so the call goes out), then its subscriptions away.
      await waitFor(async () => (await pubsubClients(redis.port)).size > ownerSubs.size, "the carrier's subscription");
      const call = rpc('tools/call', { name: 'emit', arguments: { count: 2 } });
      const away = keepCarrierAway(run % 2 === 0 ? LEASE_MS / 3 : 3 * LEASE_MS);
      const answered = send(carrier.url, { body: call, headers: sessionHeaders(h), timeoutMs: 30_000 });
      const kills = await away;
      assert.ok(kills > 0, 'the carrier was cut');
      // Only a deadlock misses this bound: the fix answers within a few lease periods.
      const r = await within(answered, `run ${run}: the carried call to end`, 20_000);
      assert.equal(r.timedOut, false, `run ${run}: the response ended by itself`);
      let last: { id?: unknown; result?: { structuredContent?: unknown }; error?: { data?: { reason?: string } } } | undefined;
      if (r.status === 200) last = messages(r.events).at(-1);
      else last = r.json() as typeof last;
      if (last?.result) {
        assert.deepEqual(last.result.structuredContent, { emitted: 2 }, `run ${run}`);
        outcomes.push('result');
      } else {
        assert.equal(last?.error?.data?.reason, 'request-abandoned', `run ${run}: ${r.status} ${r.text}`);
        outcomes.push('abandoned');
      }
      // The session goes on through the carrier once it is back.
      const next = await waitFor(async () => {
        const x = await send(carrier.url, { body: rpc('tools/call', { name: 'emit', arguments: { count: 1 } }), headers: sessionHeaders(h) });
        return x.status === 200 ? x : undefined;
      }, `run ${run}: the next call`);
      assert.ok('result' in (messages(next.events).at(-1) as object), `run ${run}: the next call's result`);
    }
    console.log(`# outcomes: ${outcomes.join(', ')}`);
  });
});
