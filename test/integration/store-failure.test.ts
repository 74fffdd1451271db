/**
 * When the log refuses writes: a brief failure is retried and nothing is lost; a lasting
 * one ends the session (404 → clients re-initialize), never a stream that goes on around
 * events that were accepted but not logged.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { memoryStore } from '../../src/store/memory.js';
import type { Store } from '../../src/store/types.js';
import { startFixture } from '../helpers/fixture.js';
import { initialize, messages, rpc, send, sessionHeaders } from '../helpers/sse-client.js';

/** The real memory store, with appends that fail while `failing()` says so. */
function flakyStore(failing: () => boolean): Store {
  const store = memoryStore();
  const append = store.log.append.bind(store.log);
  store.log.append = async (session, stream, events) => {
    if (failing()) throw new Error('disk on fire');
    return append(session, stream, events);
  };
  return store;
}

test('a store that fails briefly is retried: every event arrives, in order', async () => {
  let failures = 0;
  const f = await startFixture({ store: flakyStore(() => failures-- > 0), keepAliveMs: 0 });
  try {
    const h = await initialize(f.url);
    failures = 2; // the next two writes fail, the third attempt succeeds
    const r = await send(f.url, { body: rpc('tools/call', { name: 'emit', arguments: { count: 50 } }), headers: sessionHeaders(h) });
    const seqs = messages(r.events).filter((m) => m.method === 'notifications/message').map((m) => (m.params as { data: { seq: number } }).data.seq);
    assert.deepEqual(seqs, Array.from({ length: 50 }, (_, i) => i + 1), 'all 50, in order');
    assert.deepEqual((messages(r.events).at(-1) as { result?: { structuredContent?: unknown } }).result?.structuredContent, { emitted: 50 }, 'the result');
  } finally {
    await f.close();
  }
});

test('a store that keeps failing ends the session: its stream ends, later requests get 404', async () => {
  let broken = false;
  const f = await startFixture({ store: flakyStore(() => broken), keepAliveMs: 0 });
  try {
    const h = await initialize(f.url);
    broken = true;
    const r = await send(f.url, { body: rpc('tools/call', { name: 'emit', arguments: { count: 20 } }), headers: sessionHeaders(h), timeoutMs: 5000 });
    const delivered = messages(r.events).filter((m) => m.method === 'notifications/message');
    assert.equal(delivered.length, 0, 'nothing that is not in the log reaches the client');
    broken = false;
    const later = await send(f.url, { body: rpc('tools/list'), headers: sessionHeaders(h) });
    assert.equal(later.status, 404, 'the session is gone: its clients re-initialize');
    assert.ok(f.errors.some((e) => /disk on fire|Store unavailable/.test(`${e.message} ${String((e as { cause?: Error }).cause?.message)}`)), 'the failure was reported to onError');
  } finally {
    await f.close();
  }
});
