/**
 * The SQLite log's write path beyond the store contract: appends made together commit
 * together yet succeed or fail one by one, operations take effect in call order, a batch
 * is one row, and a miscounted `bytes` cannot corrupt what reads return.
 */
import { describe, it } from 'node:test';
import { tempFiles } from '../helpers/temp-files.js';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { chainSeed, nextChain } from '../../src/protocol/event-id.js';
import { isContinuityError } from '../../src/protocol/errors.js';
import { sqliteStore, type SqliteStoreOptions } from '../../src/store/sqlite/index.js';
import type { AppendNotice, LogEvent, Store, StreamInfo } from '../../src/store/types.js';

const tempPath = (
  (files) => (): string =>
    files.path('append')
)(tempFiles('mcpc-sqlite-append-'));
const REQUEST: StreamInfo = { kind: 'request', requestIds: ['1'] };

/** Contiguous, chained events for one stream. */
class Writer {
  readonly seed: string;
  seq = 0;
  chain: string;

  constructor(readonly stream: string) {
    this.seed = chainSeed('epoch', stream);
    this.chain = this.seed;
  }

  next(payloads: string[], bytes?: (payload: string) => number): LogEvent[] {
    return payloads.map((payload) => {
      this.chain = nextChain(this.chain, payload);
      return { seq: ++this.seq, chain: this.chain, payload, at: 1, ...(bytes ? { bytes: bytes(payload) } : {}) };
    });
  }
}

async function withStore(options: Partial<SqliteStoreOptions>, fn: (store: Store, path: string) => Promise<void>): Promise<void> {
  const path = tempPath();
  const store = sqliteStore({ path, ...options });
  try {
    await fn(store, path);
  } finally {
    await store.close();
  }
}

const payloads = async (store: Store, stream: string): Promise<string[]> => (await store.log.read('S', stream, 0, 1000)).map((e) => e.payload);

describe('sqlite store: appends', () => {
  it('appends made together commit together, but a refused one leaves the others in', async () => {
    await withStore({}, async (store) => {
      const a = new Writer('a');
      const b = new Writer('b');
      await store.log.openStream('S', 'a', a.seed, REQUEST);
      await store.log.openStream('S', 'b', b.seed, REQUEST);
      const notices: AppendNotice[] = [];
      await store.bus?.subscribeAppends('S', (n) => notices.push(n));
      b.seq = 5; // a gap: refused
      const results = await Promise.allSettled([
        store.log.append('S', 'a', a.next(['1', '2'])),
        store.log.append('S', 'b', b.next(['x'])),
        store.log.append('S', 'missing', a.next(['y'])),
        store.log.append('S', 'a', new Writer('a').next(['dup'])), // seq 1 again: refused
      ]);
      assert.equal(results[0].status, 'fulfilled');
      for (const r of results.slice(1)) assert.ok(r.status === 'rejected' && isContinuityError(r.reason, 'store-conflict'));
      a.seq -= 1; // the event for 'missing' was never appended to a
      a.chain = (await store.log.head('S', 'a'))?.lastChain as string;
      await store.log.append('S', 'a', a.next(['3']));
      assert.deepEqual(await payloads(store, 'a'), ['1', '2', '3']);
      assert.deepEqual(await payloads(store, 'b'), []);
      assert.deepEqual(
        notices.map((n) => [n.stream, n.lastSeq]),
        [
          ['a', 2],
          ['a', 3],
        ],
      );
    });
  });

  it('operations take effect in the order they were called, and close commits what was appended', async () => {
    const path = tempPath();
    const w = new Writer('st');
    let store = sqliteStore({ path });
    await store.log.openStream('S', 'st', w.seed, REQUEST);
    const appended = store.log.append('S', 'st', w.next(['1']));
    assert.equal((await store.log.head('S', 'st'))?.lastSeq, 1, 'head, called after append, sees it');
    await appended;
    const closing = store.log.append('S', 'st', w.next(['2']));
    const closed = store.log.closeStream('S', 'st');
    await Promise.all([closing, closed]);
    await store.log.append('S', 'st', []).then(
      () => assert.fail('closed'),
      (err) => assert.ok(isContinuityError(err, 'store-conflict')),
    );
    const last = store.log.append('S', 'st', []);
    await store.close();
    await last.then(
      () => {},
      () => {},
    );
    store = sqliteStore({ path });
    try {
      assert.deepEqual(await payloads(store, 'st'), ['1', '2']);
    } finally {
      await store.close();
    }
  });

  it('each append is one row; rows go once retention has trimmed all of their events', async () => {
    await withStore({ retention: { maxEvents: 4 } }, async (store, path) => {
      const w = new Writer('st');
      await store.log.openStream('S', 'st', w.seed, REQUEST);
      const rows = (): number[][] => {
        const db = new Database(path, { readonly: true });
        try {
          return db.prepare('SELECT first_seq, last_seq FROM batches ORDER BY last_seq').raw().all() as number[][];
        } finally {
          db.close();
        }
      };
      await store.log.append('S', 'st', w.next(['1', '2', '3']));
      await store.log.append('S', 'st', w.next(['4', '5', '6']));
      assert.deepEqual(
        rows(),
        [
          [1, 3],
          [4, 6],
        ],
        'the first row is partly trimmed and stays',
      );
      assert.deepEqual(await payloads(store, 'st'), ['3', '4', '5', '6']);
      await store.log.append('S', 'st', w.next(['7']));
      assert.deepEqual(rows(), [
        [4, 6],
        [7, 7],
      ]);
      assert.deepEqual(await payloads(store, 'st'), ['4', '5', '6', '7']);
      assert.equal((await store.log.head('S', 'st'))?.firstSeq, 4);
    });
  });

  it('a miscounted bytes is recounted: payloads read back exactly and retention counts true bytes', async () => {
    await withStore({ retention: { maxBytes: 12 } }, async (store) => {
      const w = new Writer('st');
      await store.log.openStream('S', 'st', w.seed, REQUEST);
      const texts = ['€€', 'ab', '\u{1F600}', ''];
      await store.log.append(
        'S',
        'st',
        w.next(texts, () => 1),
      ); // understated: 6 + 2 + 4 + 0 bytes really
      assert.deepEqual(await payloads(store, 'st'), texts);
      await store.log.append(
        'S',
        'st',
        w.next(['xyz'], () => 50),
      ); // overstated
      assert.deepEqual(await payloads(store, 'st'), ['ab', '\u{1F600}', '', 'xyz'], '9 true bytes fit in 12; 15 did not');
      const read = await store.log.read('S', 'st', 0, 10);
      assert.deepEqual(
        read.map((e) => e.bytes),
        [2, 4, 0, 3],
        'reads carry the true count',
      );
    });
  });
});
