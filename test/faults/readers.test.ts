/**
 * The server side of "readers that never read": the byte bound is checked before a write
 * is queued, a cut drops the queued bytes and errors the body (the adapter's cue to destroy
 * the socket), a taken-over reader is cut, replay pages are bounded by bytes, and GET
 * readers per session are bounded.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SseSink } from '../../src/server/stream/sse-sink.js';
import { ReplayPages, REPLAY_PAGE_BYTES } from '../../src/server/stream/replay.js';
import { memoryStore } from '../../src/store/memory/index.js';
import { startFixture } from '../helpers/fixture.js';
import { initialize, rpc, send, sessionHeaders } from '../helpers/sse-client.js';
import { waitFor, within } from '../helpers/wait.js';
import { openIdleReader } from './idle-readers.js';

const event = (i: number, bytes: number): { id: string; data: string } => ({ id: `e${i}`, data: 'x'.repeat(bytes) });

test('a lagging sink never queues more than maxBufferedBytes: the write that would pass it cuts instead', () => {
  const max = 100_000;
  const sink = new SseSink({ maxBufferedBytes: max, keepAliveMs: 0 });
  let i = 0;
  while (sink.write([event(i++, 30_000)])) assert.ok(sink.queuedBytes <= max, `queued ${sink.queuedBytes} > ${max}`);
  assert.ok(sink.ended, 'the lagging reader was cut');
  assert.equal(sink.queuedBytes, 0, 'a cut sink holds nothing');
  assert.equal(i, 4, 'three writes fit, the fourth cut');
});

test('one event larger than the bound still reaches a reader that keeps up', async () => {
  const sink = new SseSink({ maxBufferedBytes: 1000, keepAliveMs: 0 });
  assert.equal(sink.write([event(1, 5000)]), true);
  const { value } = await sink.body.getReader().read();
  assert.ok((value?.byteLength ?? 0) > 5000);
});

test('a cut errors the body and drops what was queued; close() delivers it', async () => {
  const cut = new SseSink({ maxBufferedBytes: 1 << 20, keepAliveMs: 0 });
  cut.write([event(1, 10)]);
  cut.cut();
  await assert.rejects(cut.body.getReader().read(), (e: unknown) => (e as { code?: string }).code === 'reader-cut');

  const closed = new SseSink({ maxBufferedBytes: 1 << 20, keepAliveMs: 0 });
  closed.write([event(1, 10)]);
  closed.close();
  const reader = closed.body.getReader();
  assert.ok((await reader.read()).value, 'queued data survives a normal close');
  assert.equal((await reader.read()).done, true);
});

test('replay pages are bounded by bytes, start small and grow for small events', async () => {
  const store = memoryStore();
  await store.log.openStream('s', 'big', 'seed', { kind: 'request', requestIds: [] });
  await store.log.openStream('s', 'small', 'seed', { kind: 'request', requestIds: [] });
  const big = Array.from({ length: 100 }, (_, i) => ({ seq: i + 1, chain: `c${i + 1}`, payload: 'y'.repeat(30_000), at: 0 }));
  const small = Array.from({ length: 2000 }, (_, i) => ({ seq: i + 1, chain: `c${i + 1}`, payload: 'z', at: 0 }));
  await store.log.append('s', 'big', big);
  await store.log.append('s', 'small', small);

  const pages = new ReplayPages(store.log, 's', 'big', 512);
  let seq = 0;
  while (seq < 100) {
    const page = await pages.next(seq);
    const bytes = page.reduce((n, e) => n + e.payload.length, 0);
    // Within the byte bound, or a single event larger than it.
    assert.ok(page.length === 1 || bytes <= REPLAY_PAGE_BYTES, `page of ${page.length} events, ${bytes} bytes`);
    assert.equal(page[0]?.seq, seq + 1, 'pages are contiguous');
    seq = page.at(-1)?.seq ?? seq;
  }
  const smallPages = new ReplayPages(store.log, 's', 'small', 512);
  const sizes: number[] = [];
  for (let s = 0; s < 2000;) {
    const page = await smallPages.next(s);
    sizes.push(page.length);
    s = page.at(-1)?.seq ?? s;
  }
  assert.equal(sizes[0], 16, 'the first page is small');
  assert.equal(Math.max(...sizes), 512, 'later pages reach replayPageSize');
});

test('GET readers per session are bounded: past the limit a resume gets 429 reader-limit', async (t) => {
  const fixture = await startFixture({ limits: { maxReadersPerSession: 3 }, keepAliveMs: 0 });
  t.after(() => fixture.close());
  const h = await initialize(fixture.url);
  const emitted = await send(fixture.url, { body: rpc('tools/call', { name: 'emit', arguments: { count: 120, bytes: 100_000 } }), headers: sessionHeaders(h) });
  const cursor = emitted.events.find((e) => e.id)?.id as string;
  const readers = [0, 1, 2].map(() => openIdleReader(fixture.url, { ...sessionHeaders(h), 'last-event-id': cursor }));
  t.after(() => readers.forEach((r) => r.socket.destroy()));
  await within(Promise.all(readers.map((r) => r.firstBytes)), 'three readers admitted');
  const refused = await send(fixture.url, { headers: { ...sessionHeaders(h), 'last-event-id': cursor } });
  assert.equal(refused.status, 429);
  assert.equal((refused.json() as { error: { data: { reason: string } } }).error.data.reason, 'reader-limit');
  // A reader that leaves frees its slot.
  readers[0]?.socket.destroy();
  const again = await waitFor(async () => {
    const r = await send(fixture.url, { headers: { ...sessionHeaders(h), 'last-event-id': cursor }, cutWhen: () => true });
    return r.status === 200 ? r : undefined;
  }, 'a slot freed by a reader that left');
  assert.equal(again.status, 200);
});
