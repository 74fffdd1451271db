/**
 * The SQLite store's store-wide budget (`maxTotalBytes`): past it the oldest batches in the
 * file go first, whichever stream holds them; a drop or a rollback makes it count again
 * rather than trim on a stale total; a reopened file over a smaller budget is trimmed on
 * its next commit.
 */
import { describe, it } from 'node:test';
import { tempFiles } from '../helpers/temp-files.js';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { chainSeed, nextChain } from '../../src/protocol/event-id.js';
import { DEFAULT_SQLITE_MAX_TOTAL_BYTES, sqliteStore } from '../../src/store/sqlite/index.js';
import type { LogEvent, Store, StreamInfo } from '../../src/store/types.js';

const tempPath = (
  (files) => (): string =>
    files.path('budget')
)(tempFiles('mcpc-sqlite-budget-'));
const INFO: StreamInfo = { kind: 'request', requestIds: ['1'] };

/** One stream's history as the test wrote it. */
class Stream {
  readonly seed: string;
  readonly all: LogEvent[] = [];
  constructor(
    readonly session: string,
    readonly name: string,
  ) {
    this.seed = chainSeed('epoch', name);
  }
  next(payloads: string[]): LogEvent[] {
    const out = payloads.map((payload, i) => ({ seq: this.all.length + i + 1, chain: '', payload, at: 1 }));
    let chain = this.all.at(-1)?.chain ?? this.seed;
    for (const e of out) e.chain = chain = nextChain(chain, e.payload);
    this.all.push(...out);
    return out;
  }
}

/** Payload bytes the store holds now, from its heads and reads. */
async function held(store: Store, streams: Iterable<Stream>): Promise<number> {
  let total = 0;
  for (const s of streams) for (const e of await store.log.read(s.session, s.name, 0, 1_000_000)) total += Buffer.byteLength(e.payload);
  return total;
}

describe('sqlite store: the store-wide budget (maxTotalBytes)', () => {
  it('any appends across sessions and streams: whole batches go, oldest first wherever they are, until the store is within the budget', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ stream: fc.nat({ max: 5 }), sizes: fc.array(fc.nat({ max: 200 }), { minLength: 1, maxLength: 12 }) }), {
          minLength: 1,
          maxLength: 30,
        }),
        fc.integer({ min: 1, max: 6_000 }),
        async (appends, maxTotalBytes) => {
          const store = sqliteStore({ path: ':memory:', maxTotalBytes });
          const streams = new Map<number, Stream>();
          // The model: every batch in append order, and which are still held.
          const batches: Array<{ stream: Stream; events: LogEvent[]; bytes: number; gone: boolean }> = [];
          let total = 0;
          for (const a of appends) {
            let s = streams.get(a.stream);
            if (!s) {
              s = new Stream(`S${a.stream % 2}`, `st${a.stream}`);
              streams.set(a.stream, s);
              await store.log.openStream(s.session, s.name, s.seed, INFO);
            }
            const events = s.next(a.sizes.map((n) => 'é'.repeat(n)));
            await store.log.append(s.session, s.name, events);
            const bytes = events.reduce((n, e) => n + Buffer.byteLength(e.payload), 0);
            batches.push({ stream: s, events, bytes, gone: false });
            total += bytes;
            for (const b of batches) {
              if (total <= maxTotalBytes) break;
              if (b.gone) continue;
              b.gone = true;
              total -= b.bytes;
            }
          }
          for (const s of streams.values()) {
            const kept = batches.filter((b) => b.stream === s && !b.gone).flatMap((b) => b.events);
            const read = await store.log.read(s.session, s.name, 0, 1_000_000);
            assert.deepEqual(
              read.map((e) => e.seq),
              kept.map((e) => e.seq),
              s.name,
            );
            const head = await store.log.head(s.session, s.name);
            const first = kept[0]?.seq ?? s.all.length + 1;
            assert.equal(head?.firstSeq, first);
            assert.equal(head?.baseChain, first === 1 ? s.seed : s.all[first - 2]?.chain);
          }
          assert.equal(await held(store, streams.values()), total);
          assert.ok(total <= maxTotalBytes);
          await store.close();
        },
      ),
      { numRuns: 60 },
    );
  });

  it('a dropped stream is not counted against the others: the budget counts again instead of trimming on a stale total', async () => {
    const store = sqliteStore({ path: ':memory:', maxTotalBytes: 10_000 });
    const a = new Stream('S', 'a');
    const b = new Stream('S', 'b');
    await store.log.openStream('S', 'a', a.seed, INFO);
    await store.log.append('S', 'a', a.next(['x'.repeat(9_000)]));
    await store.log.dropStream('S', 'a');
    await store.log.openStream('S', 'b', b.seed, INFO);
    await store.log.append('S', 'b', b.next(['y'.repeat(9_000)]));
    assert.equal((await store.log.read('S', 'b', 0, 10)).length, 1, 'b is within the budget on its own');
    await store.log.append('S', 'b', b.next(['z'.repeat(2_000)]));
    assert.deepEqual(
      (await store.log.read('S', 'b', 0, 10)).map((e) => e.seq),
      [2],
      'over the budget: the oldest batch went',
    );
    await store.close();
  });

  it('a file reopened with a smaller budget is trimmed to it on its next commit, oldest first', async () => {
    const path = tempPath();
    const first = sqliteStore({ path });
    const s = new Stream('S', 'a');
    await first.log.openStream('S', 'a', s.seed, INFO);
    for (let i = 0; i < 20; i++) await first.log.append('S', 'a', s.next(['p'.repeat(1_000)]));
    await first.close();
    const second = sqliteStore({ path, maxTotalBytes: 5_500 });
    await second.log.append('S', 'a', s.next(['q'.repeat(1_000)]));
    assert.deepEqual(
      (await second.log.read('S', 'a', 0, 100)).map((e) => e.seq),
      [17, 18, 19, 20, 21],
    );
    await second.close();
  });

  it('defaults to 4 GiB; a budget that is not a positive number is a RangeError', () => {
    assert.equal(DEFAULT_SQLITE_MAX_TOTAL_BYTES, 4 * 1024 ** 3);
    for (const bad of [0, -1, Number.NaN, '1' as unknown as number]) {
      assert.throws(() => sqliteStore({ path: ':memory:', maxTotalBytes: bad }), RangeError);
    }
  });
});
