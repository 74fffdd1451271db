import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { chainSeed, nextChain } from '../../src/protocol/event-id.js';
import fc from 'fast-check';
import { DEFAULT_MAX_TOTAL_BYTES, memoryStore } from '../../src/store/memory/index.js';
import { OFF_HEAP_FROM, RUN_MAX_EVENTS, RUN_MAX_UNITS } from '../../src/store/memory/runs.js';
import { byteLength } from '../../src/protocol/utf8.js';
import type { LogEvent, StreamInfo } from '../../src/store/types.js';
import { storeContract } from './contract.js';
import { waitFor } from '../helpers/wait.js';

storeContract('memory', (o) => memoryStore(o));

const INFO: StreamInfo = { kind: 'standalone', requestIds: [] };

/** Contiguous, chained events after `from`, with the given payloads. */
function events(seed: string, from: number, payloads: readonly string[]): LogEvent[] {
  let chain = seed;
  return payloads.map((payload, i) => ({ seq: from + i + 1, chain: (chain = nextChain(chain, payload)), payload, at: 1 }));
}

describe('memory store: what it holds', () => {
  it('trimmed events are released at once, not when the trimmed prefix is compacted: retained heap stays near one run', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const heap = (): number => {
      gc();
      return process.memoryUsage().heapUsed;
    };
    const store = memoryStore({ retention: { maxEvents: 10 } });
    const seed = chainSeed('e', 'st');
    await store.log.openStream('S', 'st', seed, INFO);
    const before = heap();
    // 400 appends of one full run each (~12 MB of text in all); retention keeps 10 events.
    const perRun = Math.floor(RUN_MAX_UNITS / 200) - 50;
    let chain = seed;
    let seq = 0;
    for (let b = 0; b < 400; b++) {
      const batch = events(
        chain,
        seq,
        Array.from({ length: 150 }, (_, i) => `${b}.${i}.`.padEnd(perRun, 'x')),
      );
      await store.log.append('S', 'st', batch);
      chain = (batch.at(-1) as LogEvent).chain;
      seq += batch.length;
    }
    // Kept until compaction, the 400 dead runs would hold ~12 MB. Collection can lag on a busy
    // machine, so this collects again until the heap is back near its start (or the deadline).
    let grown = 0;
    await waitFor(
      () => (grown = heap() - before) < 2 * 1024 * 1024,
      () => `the log to shrink: it still holds ${(grown / 1024 / 1024).toFixed(1)} MiB after trimming to 10 events`,
    );
    assert.equal((await store.log.read('S', 'st', 0, 100)).length, 10);
    await store.close();
  });

  it('large payloads read back exactly, a lone surrogate included', async () => {
    const store = memoryStore();
    const seed = chainSeed('e', 'st');
    await store.log.openStream('S', 'st', seed, INFO);
    const payloads = ['\u{1F600}é'.repeat(2_000), `${'x'.repeat(5_000)}\ud800${'y'.repeat(5_000)}`, 'z'.repeat(1_023), 'w'.repeat(1_024)];
    const written = events(seed, 0, payloads);
    await store.log.append('S', 'st', written);
    const read = await store.log.read('S', 'st', 0, 10);
    assert.deepEqual(
      read.map((e) => [e.seq, e.chain, e.payload, e.at]),
      written.map((e) => [e.seq, e.chain, e.payload, e.at]),
    );
    assert.deepEqual(await store.log.read('S', 'st', 1, 1).then((r) => r.map((e) => e.payload)), [payloads[1]]);
    await store.close();
  });
});

describe('memory store: events packed in runs', () => {
  /** Payloads of every kind a run meets: empty, small, multibyte, a lone surrogate, at and past the off-heap bound. */
  const payload = fc.oneof(
    fc.constant(''),
    fc.string({ maxLength: 40 }),
    fc.string({ unit: 'grapheme', maxLength: 20 }),
    fc.constant('a\ud800b'),
    fc.nat({ max: 3 }).map((n) => 'p'.repeat(OFF_HEAP_FROM - 1 + n)),
    fc.constant('\u{1F600}'.repeat(OFF_HEAP_FROM)),
  );

  it('any batches, any retention: every read returns exactly the retained events of a model log, and the head matches', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(payload, { minLength: 1, maxLength: RUN_MAX_EVENTS + 40 }), { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 1, max: 600 }),
        fc.integer({ min: 1, max: 200_000 }),
        fc.array(fc.nat({ max: 1_000 }), { minLength: 1, maxLength: 8 }),
        async (batches, maxEvents, maxBytes, cursors) => {
          const store = memoryStore({ retention: { maxEvents, maxBytes } });
          const seed = chainSeed('e', 'st');
          await store.log.openStream('S', 'st', seed, INFO);
          const all: LogEvent[] = [];
          for (const batch of batches) {
            const written = events(all.at(-1)?.chain ?? seed, all.length, batch).map((e, i) => ({ ...e, at: all.length + i }));
            await store.log.append('S', 'st', written);
            all.push(...written);
          }
          // The model: the newest events within both bounds.
          let first = all.length;
          let bytes = 0;
          while (first > 0 && all.length - first < maxEvents && bytes + byteLength((all[first - 1] as LogEvent).payload) <= maxBytes) {
            bytes += byteLength((all[--first] as LogEvent).payload);
          }
          const head = await store.log.head('S', 'st');
          assert.equal(head?.firstSeq, first + 1);
          assert.equal(head?.lastSeq, all.length);
          assert.equal(head?.baseChain, first === 0 ? seed : all[first - 1]?.chain);
          for (const cursor of [0, first, ...cursors]) {
            for (const limit of [1, 7, 1_000]) {
              const read = await store.log.read('S', 'st', cursor, limit);
              const expected = all.slice(Math.max(cursor, first), Math.max(cursor, first) + limit);
              assert.deepEqual(
                read.map((e) => [e.seq, e.chain, e.payload, e.at, e.bytes]),
                expected.map((e) => [e.seq, e.chain, e.payload, e.at, byteLength(e.payload)]),
              );
            }
          }
          await store.close();
        },
      ),
      { numRuns: 60 },
    );
  });

  it('a run is kept while any of its events is, and trimmed event by event', async () => {
    const store = memoryStore({ retention: { maxEvents: 10 } });
    const seed = chainSeed('e', 'st');
    await store.log.openStream('S', 'st', seed, INFO);
    // One append of 40 events packs into one run; the next appends trim it event by event.
    let last: LogEvent | undefined;
    const append = async (payloads: string[], oneByOne: boolean): Promise<void> => {
      const more = events(last?.chain ?? seed, last?.seq ?? 0, payloads);
      if (oneByOne) for (const e of more) await store.log.append('S', 'st', [e]);
      else await store.log.append('S', 'st', more);
      last = more.at(-1);
    };
    await append(
      Array.from({ length: 40 }, (_, i) => `first-${i}`),
      false,
    );
    await append(['next-40', 'next-41', 'next-42', 'next-43', 'next-44'], true);
    assert.deepEqual(
      (await store.log.read('S', 'st', 0, 2)).map((e) => e.payload),
      ['first-35', 'first-36'],
    );
    assert.equal(
      (await store.log.head('S', 'st'))?.baseChain,
      (await store.log.read('S', 'st', 0, 1)).length === 1
        ? events(
            seed,
            0,
            Array.from({ length: 35 }, (_, i) => `first-${i}`),
          ).at(-1)?.chain
        : undefined,
    );
    await append(['next-45', 'next-46', 'next-47', 'next-48', 'next-49'], true);
    assert.deepEqual(
      (await store.log.read('S', 'st', 0, 100)).map((e) => e.payload),
      Array.from({ length: 10 }, (_, i) => `next-${40 + i}`),
    );
    await store.close();
  });

  it('a batch larger than a run reads back across run boundaries', async () => {
    const store = memoryStore({ retention: { maxEvents: 100_000, maxBytes: 1 << 30 } });
    const seed = chainSeed('e', 'st');
    await store.log.openStream('S', 'st', seed, INFO);
    const big = 'q'.repeat(Math.floor(RUN_MAX_UNITS / 3)); // a few per run by size
    const payloads = Array.from({ length: 3 * RUN_MAX_EVENTS + 5 }, (_, i) => (i % 50 === 7 ? big : `e${i}`));
    const written = events(seed, 0, payloads);
    await store.log.append('S', 'st', written);
    for (const cursor of [0, RUN_MAX_EVENTS - 1, RUN_MAX_EVENTS, RUN_MAX_EVENTS + 1, 2 * RUN_MAX_EVENTS, payloads.length - 1]) {
      const read = await store.log.read('S', 'st', cursor, RUN_MAX_EVENTS + 3);
      assert.deepEqual(
        read.map((e) => e.payload),
        payloads.slice(cursor, cursor + RUN_MAX_EVENTS + 3),
      );
      assert.deepEqual(
        read.map((e) => e.seq),
        written.slice(cursor, cursor + RUN_MAX_EVENTS + 3).map((e) => e.seq),
      );
    }
    await store.close();
  });
});

describe('memory store: the store-wide budget (maxTotalBytes)', () => {
  it('any appends and drops across streams: the store holds the newest events within the budget, oldest trimmed first wherever they are', async () => {
    const op = fc.oneof(
      {
        weight: 5,
        arbitrary: fc.record({
          kind: fc.constant('append' as const),
          stream: fc.nat({ max: 4 }),
          sizes: fc.array(fc.nat({ max: 300 }), { minLength: 1, maxLength: 30 }),
        }),
      },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('drop' as const), stream: fc.nat({ max: 4 }) }) },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(op, { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 1, max: 5_000 }),
        fc.integer({ min: 1, max: 200 }),
        async (ops, maxTotalBytes, maxEvents) => {
          const store = memoryStore({ maxTotalBytes, retention: { maxEvents } });
          // The model: each stream's events, and every event in append order.
          type Held = { stream: string; event: LogEvent; bytes: number; gone: boolean };
          const streams = new Map<string, { seed: string; all: LogEvent[]; held: Held[] }>();
          const order: Held[] = [];
          let total = 0;
          const drop = (h: Held): void => {
            const s = streams.get(h.stream);
            assert.equal(s?.held[0], h, 'the model trims a stream oldest first');
            s?.held.shift();
            h.gone = true;
            total -= h.bytes;
          };
          for (const o of ops) {
            const name = `s${o.stream}`;
            if (o.kind === 'drop') {
              const s = streams.get(name);
              if (!s) continue;
              await store.log.dropStream('S', name);
              for (const h of s.held.splice(0)) {
                h.gone = true;
                total -= h.bytes;
              }
              streams.delete(name);
              continue;
            }
            let s = streams.get(name);
            if (!s) {
              s = { seed: chainSeed('e', name), all: [], held: [] };
              streams.set(name, s);
              await store.log.openStream('S', name, s.seed, INFO);
            }
            const written = events(
              s.all.at(-1)?.chain ?? s.seed,
              s.all.length,
              o.sizes.map((n) => 'é'.repeat(n)),
            );
            await store.log.append('S', name, written);
            for (const e of written) {
              const h = { stream: name, event: e, bytes: byteLength(e.payload), gone: false };
              s.all.push(e);
              s.held.push(h);
              order.push(h);
              total += h.bytes;
            }
            while (s.held.length > maxEvents) drop(s.held[0] as Held);
            while (total > maxTotalBytes) drop(order.find((h) => !h.gone) as Held);
          }
          for (const [name, s] of streams) {
            const read = await store.log.read('S', name, 0, 100_000);
            assert.deepEqual(
              read.map((e) => e.seq),
              s.held.map((h) => h.event.seq),
              name,
            );
            const head = await store.log.head('S', name);
            const first = s.held[0]?.event.seq ?? s.all.length + 1;
            assert.equal(head?.firstSeq, first);
            assert.equal(head?.baseChain, first === 1 ? s.seed : s.all[first - 2]?.chain);
          }
          assert.ok(total <= maxTotalBytes);
          await store.close();
        },
      ),
      { numRuns: 80 },
    );
  });

  it('one client calling a tool with large answers again and again: what the store holds stays within its budget', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const budget = 8 * 1024 * 1024;
    const store = memoryStore({ maxTotalBytes: budget });
    const before = (gc(), process.memoryUsage());
    const answer = '\u{1F600}'.repeat(256 * 1024); // 1 MiB of UTF-8, kept off the heap
    // 200 completed request streams of one session, 1 MiB each: 25 times the budget.
    for (let i = 1; i <= 200; i++) {
      const name = i.toString(36);
      const seed = chainSeed('e', name);
      await store.log.openStream('S', name, seed, INFO);
      await store.log.append('S', name, events(seed, 0, [answer]));
      await store.log.closeStream('S', name);
    }
    // Buffers are freed after the collection that finds them dead, off the main thread; on a busy
    // machine that lags, so this collects again until the growth is within bounds (or the deadline).
    let grown = 0;
    await waitFor(
      () => {
        gc();
        const after = process.memoryUsage();
        grown = after.arrayBuffers - before.arrayBuffers + (after.heapUsed - before.heapUsed);
        return grown < 2 * budget;
      },
      () => `the store to stay within twice its 8 MiB budget: it grew by ${(grown / 1024 / 1024).toFixed(1)} MiB`,
    );
    // The newest answers are whole; the oldest were trimmed (a resume from them is refused, not lossy).
    assert.deepEqual(
      (await store.log.read('S', (200).toString(36), 0, 10)).map((e) => e.payload),
      [answer],
    );
    const oldest = await store.log.head('S', '1');
    assert.equal(oldest?.firstSeq, 2, 'the oldest stream is trimmed past its only event');
    assert.deepEqual(await store.log.read('S', '1', 0, 10), []);
    await store.close();
  });

  it('defaults to 512 MiB; a budget that is not a positive number is a RangeError', () => {
    assert.equal(DEFAULT_MAX_TOTAL_BYTES, 512 * 1024 * 1024);
    for (const bad of [0, -1, Number.NaN]) assert.throws(() => memoryStore({ maxTotalBytes: bad }), RangeError);
  });
});

describe('memory store: a wrong byte count from the caller', () => {
  it('large payloads still read back exactly when `bytes` is short, long, fractional, infinite or not a number', async () => {
    const store = memoryStore();
    const seed = chainSeed('e', 'st');
    await store.log.openStream('S', 'st', seed, INFO);
    const payload = '\u{1F600}é'.repeat(1_000);
    const written = events(seed, 0, [payload, payload, payload, payload, payload, payload]).map((e, i) => ({
      ...e,
      bytes: [10, 100_000, Number.NaN, -1, 1.5, Number.POSITIVE_INFINITY][i],
    }));
    await store.log.append('S', 'st', written);
    const read = await store.log.read('S', 'st', 0, 10);
    assert.deepEqual(
      read.map((e) => e.payload),
      [payload, payload, payload, payload, payload, payload],
    );
    await store.close();
  });
});
