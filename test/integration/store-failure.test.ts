/**
 * When the log refuses writes: a brief failure is retried and nothing is lost; a lasting
 * one ends the session (404 → clients re-initialize), never a stream that goes on around
 * events that were accepted but not logged.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { memoryStore } from '../../src/store/memory/index.js';
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
    const seqs = messages(r.events)
      .filter((m) => m.method === 'notifications/message')
      .map((m) => (m.params as { data: { seq: number } }).data.seq);
    assert.deepEqual(
      seqs,
      Array.from({ length: 50 }, (_, i) => i + 1),
      'all 50, in order',
    );
    assert.deepEqual((messages(r.events).at(-1) as { result?: { structuredContent?: unknown } }).result?.structuredContent, { emitted: 50 }, 'the result');
  } finally {
    await f.close();
  }
});

test('a store that fails in the middle of a stream ends it: the client got only logged events, a prefix, and no result', async () => {
  let broken = false;
  const logged = new Set<string>(); // `${stream}.${seq}.${chain}` of every append the store accepted
  const store = flakyStore(() => broken);
  const append = store.log.append.bind(store.log);
  store.log.append = async (session, stream, events) => {
    await append(session, stream, events);
    for (const e of events) logged.add(`${stream}.${e.seq}.${e.chain}`);
  };
  const f = await startFixture({ store, keepAliveMs: 0 });
  try {
    const h = await initialize(f.url);
    const BREAK_AFTER = 5;
    const COUNT = 200;
    const r = await send(f.url, {
      body: rpc('tools/call', { name: 'emit', arguments: { count: COUNT, intervalMs: 10 } }),
      headers: sessionHeaders(h),
      // The store breaks while the tool is still emitting, once the client has seen some events.
      cutWhen: (_event, all) => {
        if (messages(all).length >= BREAK_AFTER) broken = true;
        return false;
      },
      timeoutMs: 20_000,
    });
    assert.equal(r.status, 200, 'the stream had started: the failure came mid-stream');
    assert.ok(broken, 'the store broke while the stream was open');
    const delivered = messages(r.events).filter((m) => m.method === 'notifications/message');
    const seqs = delivered.map((m) => (m.params as { data: { seq: number } }).data.seq);
    assert.ok(seqs.length >= BREAK_AFTER, `events before the failure arrived (${seqs.length})`);
    assert.ok(seqs.length < COUNT, `the stream ended early (${seqs.length} of ${COUNT})`);
    assert.deepEqual(
      seqs,
      Array.from({ length: seqs.length }, (_, i) => i + 1),
      'a contiguous prefix: nothing skipped',
    );
    assert.ok(!messages(r.events).some((m) => 'result' in m), 'no result: the call did not finish on a stream with a hole');
    for (const event of r.events) {
      const [, stream, seq, chain] = (event.id ?? '').split('.');
      assert.ok(logged.has(`${stream}.${seq}.${chain}`), `event ${event.id} reached the client but was never logged`);
    }
    broken = false;
    const later = await send(f.url, { body: rpc('tools/list'), headers: sessionHeaders(h) });
    assert.equal(later.status, 404, 'the session is gone: its clients re-initialize');
    assert.ok(
      f.errors.some((e) => /disk on fire|Store unavailable/.test(`${e.message} ${String((e as { cause?: Error }).cause?.message)}`)),
      'the failure was reported to onError',
    );
  } finally {
    await f.close();
  }
});
