/**
 * Resume over real sockets: cut a POST stream and the standalone stream at many points
 * (FIN and RST), resume each time with the last ID seen, and count what the client got.
 * Lost, duplicated, reordered and unexpected must all be 0. Seeds are printed on failure.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { EventSourceMessage } from 'eventsource-parser';
import { parseEventId } from '../../src/protocol/event-id.js';
import { startFixture, type Fixture } from '../helpers/fixture.js';
import { initialize, messages, rpc, send, sessionHeaders } from '../helpers/sse-client.js';
import { createStreamServer, deliveryReport } from '../helpers/stream-server.js';
import { callThroughCuts, cutPoints } from '../helpers/cut-resume.js';

const ZERO = { lost: 0, duplicated: 0, reordered: 0, unexpected: 0 };

/** Checks that the SSE IDs seen are one stream's contiguous run, without repeats. */
function assertContiguousIds(events: EventSourceMessage[], context: string): void {
  let previous: number | undefined;
  const seen = new Set<string>();
  for (const e of events) {
    assert.ok(e.id, `${context}: event without id`);
    assert.ok(!seen.has(e.id), `${context}: duplicate id ${e.id}`);
    seen.add(e.id);
    const { seq } = parseEventId(e.id);
    if (previous !== undefined) assert.equal(seq, previous + 1, `${context}: seq ${seq} after ${previous}`);
    previous = seq;
  }
}

function payloadSeqs(events: EventSourceMessage[]): number[] {
  return messages(events)
    .filter((m) => m.method === 'notifications/message')
    .map((m) => (m.params as { data: { seq: number } }).data.seq);
}

describe('resume a POST stream cut at many points', () => {
  let f: Fixture;
  before(async () => {
    f = await startFixture({ keepAliveMs: 0 });
  });
  after(() => f.close());

  for (const seed of [1, 2, 3, 4]) {
    test(`emit 500, 8 cuts, seed ${seed}`, async () => {
      const h = await initialize(f.url);
      const cuts = cutPoints(seed, 8, 500);
      const { all } = await callThroughCuts(f.url, h, 'emit', { count: 500 }, cuts, seed);
      assertContiguousIds(all, `seed ${seed}`);
      assert.deepEqual(
        { ...deliveryReport(payloadSeqs(all), 500), received: undefined },
        { ...ZERO, received: undefined },
        `seed ${seed} cuts ${cuts.join(',')}`,
      );
      // The tail of the stream is the tool result, delivered once.
      assert.equal(messages(all).filter((m) => 'result' in m).length, 1);
    });
  }

  test('a burst of 2,000 events within the same millisecond, cut 10 times', async () => {
    const seed = 2000;
    const g = await startFixture({ keepAliveMs: 0, server: () => createStreamServer() });
    try {
      const h = await initialize(g.url);
      const cuts = cutPoints(seed, 10, 2000);
      const { all } = await callThroughCuts(g.url, h, 'burst', { count: 2000 }, cuts, seed);
      assertContiguousIds(all, `seed ${seed}`);
      const report = deliveryReport(payloadSeqs(all), 2000);
      assert.deepEqual({ ...report, received: 0 }, { ...ZERO, received: 0 }, `seed ${seed} cuts ${cuts.join(',')}`);
      // Prove the test exercised a same-millisecond burst: events share timestamps (many
      // per millisecond on an idle machine; at least ten even on a loaded one).
      const stream = parseEventId(all[0]?.id ?? '').stream;
      const stored = await g.endpoint.store.log.read(h.sessionId, stream, 0, 5000);
      const perMs = new Map<number, number>();
      for (const e of stored) perMs.set(e.at, (perMs.get(e.at) ?? 0) + 1);
      assert.ok(Math.max(...perMs.values()) >= 10, `burst spread over ${perMs.size} ms`);
    } finally {
      await g.close();
    }
  });
});

describe('resume the standalone GET stream cut at many points', () => {
  for (const seed of [11, 12, 13]) {
    test(`broadcast 300, 6 cuts, seed ${seed}`, async () => {
      const f = await startFixture({ keepAliveMs: 0, server: () => createStreamServer() });
      try {
        const h = await initialize(f.url);
        const total = 300;
        const cuts = cutPoints(seed, 6, total);
        const all: EventSourceMessage[] = [];
        // Open the stream and wait for its priming event before anything is broadcast.
        let primed!: () => void;
        const isPrimed = new Promise<void>((r) => (primed = r));
        const seen = (): number => payloadSeqs(all).length;
        let cutIndex = 0;
        const cutWhen = (e: EventSourceMessage, got: EventSourceMessage[]): boolean => {
          if (e.data === '') primed();
          const target = cuts[cutIndex] ?? total;
          return seen() + payloadSeqs(got).length >= target;
        };
        const first = send(f.url, { headers: sessionHeaders(h), cutWhen, cut: 'fin' });
        await isPrimed;
        const call = send(f.url, { body: rpc('tools/call', { name: 'broadcast', arguments: { count: total, intervalMs: 0 } }), headers: sessionHeaders(h) });
        all.push(...(await first).events);
        for (let round = 0; seen() < total; round++) {
          assert.ok(round < cuts.length + 3, `seed ${seed}: stalled at ${seen()} of ${total}`);
          cutIndex++;
          const last = all.at(-1)?.id as string;
          const r = await send(f.url, { headers: sessionHeaders(h, { 'last-event-id': last }), cutWhen, cut: cutIndex % 2 ? 'rst' : 'fin', timeoutMs: 5000 });
          assert.equal(r.status, 200, r.text);
          all.push(...r.events);
        }
        assert.equal((await call).status, 200);
        // Nothing more may follow the last one: a sentinel broadcast after it is the next thing a resume from it reads.
        const last = all.at(-1)?.id as string;
        assert.equal((await send(f.url, { body: rpc('tools/call', { name: 'broadcast', arguments: { count: 1 } }), headers: sessionHeaders(h) })).status, 200);
        const tail = await send(f.url, { headers: sessionHeaders(h, { 'last-event-id': last }), cutWhen: (e) => e.data !== '' });
        assert.equal(tail.status, 200);
        const next = tail.events.filter((e) => e.data !== '');
        assert.deepEqual(payloadSeqs(next), [1], 'the sentinel, and nothing before it');
        assert.equal(parseEventId(next[0]?.id ?? '').seq, parseEventId(last).seq + 1, 'right after the last event');
        assertContiguousIds(all, `seed ${seed}`);
        const report = deliveryReport(payloadSeqs(all), total);
        assert.deepEqual({ ...report, received: 0 }, { ...ZERO, received: 0 }, `seed ${seed} cuts ${cuts.join(',')}`);
      } finally {
        await f.close();
      }
    });
  }
});
