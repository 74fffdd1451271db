import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { chainSeed, nextChain } from '../../src/protocol/event-id.js';
import fc from 'fast-check';
import { memoryStore } from '../../src/store/memory.js';
import { OFF_HEAP_FROM, RUN_MAX_EVENTS, RUN_MAX_UNITS } from '../../src/store/memory-runs.js';
import { byteLength } from '../../src/protocol/utf8.js';
import type { LogEvent, StreamInfo } from '../../src/store/types.js';
import { storeContract } from './contract.js';

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
      const batch = events(chain, seq, Array.from({ length: 150 }, (_, i) => `${b}.${i}.`.padEnd(perRun, 'x')));
      await store.log.append('S', 'st', batch);
      chain = (batch.at(-1) as LogEvent).chain;
      seq += batch.length;
    }
    const grown = heap() - before;
    // Kept until compaction, the 400 dead runs would hold ~12 MB.
    assert.ok(grown < 2 * 1024 * 1024, `the log still holds ${(grown / 1024 / 1024).toFixed(1)} MiB after trimming to 10 events`);
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
    assert.deepEqual(read.map((e) => [e.seq, e.chain, e.payload, e.at]), written.map((e) => [e.seq, e.chain, e.payload, e.at]));
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
              assert.deepEqual(read.map((e) => [e.seq, e.chain, e.payload, e.at, e.bytes]), expected.map((e) => [e.seq, e.chain, e.payload, e.at, byteLength(e.payload)]));
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
    await append(Array.from({ length: 40 }, (_, i) => `first-${i}`), false);
    await append(['next-40', 'next-41', 'next-42', 'next-43', 'next-44'], true);
    assert.deepEqual((await store.log.read('S', 'st', 0, 2)).map((e) => e.payload), ['first-35', 'first-36']);
    assert.equal((await store.log.head('S', 'st'))?.baseChain, (await store.log.read('S', 'st', 0, 1)).length === 1 ? events(seed, 0, Array.from({ length: 35 }, (_, i) => `first-${i}`)).at(-1)?.chain : undefined);
    await append(['next-45', 'next-46', 'next-47', 'next-48', 'next-49'], true);
    assert.deepEqual((await store.log.read('S', 'st', 0, 100)).map((e) => e.payload), Array.from({ length: 10 }, (_, i) => `next-${40 + i}`));
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
      assert.deepEqual(read.map((e) => e.payload), payloads.slice(cursor, cursor + RUN_MAX_EVENTS + 3));
      assert.deepEqual(read.map((e) => e.seq), written.slice(cursor, cursor + RUN_MAX_EVENTS + 3).map((e) => e.seq));
    }
    await store.close();
  });
});

describe('memory store: a wrong byte count from the caller', () => {
  it('large payloads still read back exactly when `bytes` is short, long, fractional, infinite or not a number', async () => {
    const store = memoryStore();
    const seed = chainSeed('e', 'st');
    await store.log.openStream('S', 'st', seed, INFO);
    const payload = '\u{1F600}é'.repeat(1_000);
    const written = events(seed, 0, [payload, payload, payload, payload, payload, payload]).map((e, i) => ({ ...e, bytes: [10, 100_000, Number.NaN, -1, 1.5, Number.POSITIVE_INFINITY][i] }));
    await store.log.append('S', 'st', written);
    const read = await store.log.read('S', 'st', 0, 10);
    assert.deepEqual(read.map((e) => e.payload), [payload, payload, payload, payload, payload, payload]);
    await store.close();
  });
});
