/**
 * Idle expiry in a cluster on real Redis: a session at rest (no replica holds it) that was
 * idle past `sessionIdleMs` answers 404 on any replica, and the store's idle index comes
 * back down to the live sessions, also after Redis expired abandoned sessions' keys itself.
 *
 * Replica clocks are shifted (the endpoint's `now`) instead of waiting out the idle time.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createClient } from '@redis/client';
import { createExampleServer } from '../../src/example/index.js';
import { listen, type Listener } from '../../src/node/index.js';
import { createEndpoint, type Endpoint } from '../../src/server/index.js';
import { redisStore } from '../../src/store/redis/index.js';
import type { Store } from '../../src/store/types.js';
import { dropPrefix, randomPrefix, redisOrSkip, SHARED_REDIS_URL } from '../helpers/redis.js';
import { initialize, rpc, send, sessionHeaders } from '../helpers/sse-client.js';
import { waitFor } from '../helpers/wait.js';

const available = await redisOrSkip('the Redis idle expiry tests');

const IDLE_MS = 3_000;

describe('idle expiry in a cluster (Redis)', { skip: !available }, () => {
  const prefix = randomPrefix('idle');
  const stores: Store[] = [];
  const cleanup: Array<() => Promise<void>> = [];
  let redis: ReturnType<typeof createClient>;

  before(async () => {
    redis = createClient({ url: SHARED_REDIS_URL });
    redis.on('error', () => {});
    await redis.connect();
  });
  after(async () => {
    for (const c of cleanup.reverse()) await c().catch(() => {});
    for (const s of stores) await s.close().catch(() => {});
    await redis.close();
    await dropPrefix(prefix);
  });

  /** A replica on the shared prefix, with its clock `shift` ms ahead. */
  async function replica(
    replicaId: string,
    o: { shift?: number; sessionTtlMs?: number } = {},
  ): Promise<{ url: URL; endpoint: Endpoint; stop(): Promise<void> }> {
    const store = await redisStore({ url: SHARED_REDIS_URL, keyPrefix: prefix, ...(o.sessionTtlMs ? { sessionTtlMs: o.sessionTtlMs } : {}) });
    stores.push(store);
    const endpoint = createEndpoint({
      store,
      server: () => createExampleServer(),
      cluster: { leaseMs: 600, replicaId },
      limits: { sessionIdleMs: IDLE_MS, passivateAfterMs: 400 },
      now: () => Date.now() + (o.shift ?? 0),
    });
    const listener: Listener = await listen(endpoint, { port: 0 });
    const stop = () => listener.close();
    cleanup.push(stop);
    return { url: listener.url, endpoint, stop };
  }

  const indexSize = (): Promise<number> => redis.zCard(`${prefix}idle`);

  it('a session at rest idle past sessionIdleMs gets 404 on any replica', async () => {
    const a = await replica('a');
    const h = await initialize(a.url);
    const list = () => rpc('tools/list');
    assert.equal((await send(a.url, { body: list(), headers: sessionHeaders(h) })).status, 200);
    await a.stop(); // its sessions are left at rest, leases released
    const late = await replica('late', { shift: IDLE_MS * 4 }); // 12 s later, by its clock
    const r = await send(late.url, { body: list(), headers: sessionHeaders(h) });
    assert.equal(r.status, 404, `idle past the limit: 404 (${r.text})`);
    assert.equal(await redis.exists(`${prefix}{${h.sessionId}}:rec`), 0, 'its record is gone');
    await late.stop();
  });

  it('the idle index shrinks back to the live sessions, also after Redis expired abandoned sessions’ keys', async () => {
    const baseline = await indexSize();
    const expiring = await replica('expiring', { sessionTtlMs: 300 }); // Redis drops these sessions' keys itself
    const resting = await replica('resting');
    const abandoned: string[] = [];
    for (let i = 0; i < 10; i++) abandoned.push((await initialize(expiring.url)).sessionId);
    for (let i = 0; i < 10; i++) abandoned.push((await initialize(resting.url)).sessionId);
    await expiring.stop();
    await resting.stop();
    // One member per abandoned session; a sweep that ran meanwhile (a slow machine) may already
    // have pruned some of the first ten, whose keys Redis expires after 300 ms, never the rest.
    const held = (await indexSize()) - baseline;
    assert.ok(held >= 10 && held <= 20, `one index member per abandoned session, less any already expired: ${held}`);
    await waitFor(async () => (await redis.exists(abandoned.slice(0, 10).map((id) => `${prefix}{${id}}:rec`))) === 0, 'Redis to expire the first ten');
    // A replica whose clock says the abandoned sessions are idle past the limit, with live sessions of its own.
    const live = await replica('live', { shift: IDLE_MS * 4 });
    const own = [await initialize(live.url), await initialize(live.url)];
    await waitFor(async () => (await indexSize()) === baseline + 2, 'the index to hold only the live sessions');
    for (const id of abandoned) assert.equal(await redis.exists(`${prefix}{${id}}:rec`), 0);
    const keys: string[] = [];
    for await (const batch of redis.scanIterator({ MATCH: `${prefix}{*`, COUNT: 1000 })) keys.push(...batch);
    assert.ok(
      keys.every((k) => own.some((h) => k.includes(`{${h.sessionId}}`))),
      `only live sessions’ keys remain: ${keys.filter((k) => !own.some((h) => k.includes(h.sessionId))).join(', ')}`,
    );
    for (const h of own)
      assert.equal((await send(live.url, { body: rpc('tools/list'), headers: sessionHeaders(h) })).status, 200, 'live sessions still answer');
  });
});
