/**
 * The store contract: what every {@link Store} must do, whatever it keeps its data in.
 *
 * Each store's test file calls {@link storeContract} with a factory. The factory must return
 * an empty store, isolated from every other store it returned (a fresh database, or a
 * unique key prefix). The suite closes every store it made after each test.
 */
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chainSeed, nextChain } from '../../src/protocol/event-id.js';
import { isContinuityError } from '../../src/protocol/errors.js';
import type { LogEvent, RetentionOptions, SessionRecord, Store, StreamHead, StreamInfo } from '../../src/store/types.js';
import { ownershipContract } from './ownership-contract.js';

export interface StoreFactoryOptions {
  retention?: RetentionOptions;
  now?: () => number;
}

export type StoreFactory = (opts: StoreFactoryOptions) => Promise<Store> | Store;

const REQUEST: StreamInfo = { kind: 'request', requestIds: ['1', '"req-a"'] };
const STANDALONE: StreamInfo = { kind: 'standalone', requestIds: [] };
const T0 = 1_700_000_000_000;

function record(id: string, patch: Partial<SessionRecord> = {}): SessionRecord {
  return {
    id,
    epoch: 'epochA',
    pastEpochs: ['epoch0', 'epoch1'],
    protocolVersion: '2025-11-25',
    initialize: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c\u00e9 \u{1F600}', version: '1.0.0' } },
    }),
    principal: 'user:alice',
    createdAt: T0,
    lastActiveAt: T0 + 5_000,
    ...patch,
  };
}

/** Builds a stream's events the way the server does: contiguous seqs, chained payloads. */
class StreamWriter {
  readonly seed: string;
  seq = 0;
  chain: string;
  readonly all: LogEvent[] = [];

  constructor(epoch: string, stream: string) {
    this.seed = chainSeed(epoch, stream);
    this.chain = this.seed;
  }

  next(payloads: readonly string[], at = T0): LogEvent[] {
    const out = payloads.map((payload) => {
      this.seq++;
      this.chain = nextChain(this.chain, payload);
      return { seq: this.seq, chain: this.chain, payload, at };
    });
    this.all.push(...out);
    return out;
  }

  /** `count` JSON-RPC notifications. */
  messages(count: number, at = T0, tag = 'm'): LogEvent[] {
    return this.next(
      Array.from({ length: count }, (_, i) => JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { tag, n: this.seq + i + 1 } })),
      at,
    );
  }

  /** Chain value of event `seq` (the seed for 0). */
  chainOf(seq: number): string {
    return seq === 0 ? this.seed : (this.all[seq - 1] as LogEvent).chain;
  }
}

function plain(events: readonly LogEvent[]): LogEvent[] {
  return events.map((e) => ({ seq: e.seq, chain: e.chain, payload: e.payload, at: e.at }));
}

function isConflict(err: unknown): boolean {
  return isContinuityError(err, 'store-conflict');
}

function utf8(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

export function storeContract(name: string, make: StoreFactory): void {
  describe(`store contract: ${name}`, () => {
    const made: Store[] = [];
    afterEach(async () => {
      for (const store of made.splice(0)) await store.close();
    });

    async function open(opts: StoreFactoryOptions = {}): Promise<Store> {
      const store = await make(opts);
      made.push(store);
      return store;
    }

    async function readAll(store: Store, session: string, stream: string): Promise<LogEvent[]> {
      return plain(await store.log.read(session, stream, 0, Number.MAX_SAFE_INTEGER));
    }

    async function headOf(store: Store, session: string, stream: string): Promise<StreamHead> {
      const h = await store.log.head(session, stream);
      assert.ok(h, `head of ${session}/${stream}`);
      return h;
    }

    /** Opens a stream and returns a writer for it. */
    async function stream(store: Store, session: string, name: string, info: StreamInfo = REQUEST): Promise<StreamWriter> {
      const w = new StreamWriter(`ep-${session}`, name);
      await store.log.openStream(session, name, w.seed, info);
      return w;
    }

    async function assertHead(store: Store, session: string, name: string, w: StreamWriter, firstSeq: number): Promise<void> {
      const h = await headOf(store, session, name);
      assert.equal(h.lastSeq, w.seq, 'lastSeq');
      assert.equal(h.lastChain, w.chain, 'lastChain');
      assert.equal(h.firstSeq, firstSeq, 'firstSeq');
      assert.equal(h.baseChain, w.chainOf(firstSeq - 1), 'baseChain is the chain of event firstSeq - 1');
      assert.deepEqual(await readAll(store, session, name), w.all.slice(firstSeq - 1), 'retained events');
    }

    describe('sessions', () => {
      it('create then get returns an equal record; unknown ids are undefined', async () => {
        const store = await open();
        const r = record('s1');
        await store.sessions.create(r);
        assert.deepEqual(await store.sessions.get('s1'), r);
        assert.equal(await store.sessions.get('s2'), undefined);
        assert.equal(await store.sessions.get(''), undefined);
      });

      it('a record without principal reads back without one', async () => {
        const store = await open();
        const r = record('s1', { principal: undefined });
        await store.sessions.create(r);
        const got = await store.sessions.get('s1');
        assert.ok(got, 'record exists');
        assert.equal(got.principal, undefined);
        const { principal: _p, ...rest } = got;
        const { principal: _q, ...expected } = r;
        assert.deepEqual(rest, expected);
      });

      it('fields round trip exactly (empty pastEpochs, unicode, large timestamps)', async () => {
        const store = await open();
        const r = record('s\u00e9-1', { pastEpochs: [], initialize: '{"x":"\u0000\n\u{1F600}"}', createdAt: 0, lastActiveAt: 8_640_000_000_000_000 });
        await store.sessions.create(r);
        assert.deepEqual(await store.sessions.get('s\u00e9-1'), r);
      });

      it('the session state round trips through create and put, and a put without it clears it', async () => {
        const store = await open();
        const state = JSON.stringify({ v: 1, journal: ['{"method":"logging/setLevel","params":{"level":"error"}}'], app: '\u{1F600}\u0000' });
        await store.sessions.create(record('s1', { state }));
        assert.deepEqual(await store.sessions.get('s1'), record('s1', { state }));
        const next = record('s1', { state: JSON.stringify({ v: 1, journal: [] }), lastActiveAt: T0 + 9_000 });
        await store.sessions.put(next);
        assert.deepEqual(await store.sessions.get('s1'), next);
        await store.sessions.put(record('s1'));
        assert.equal((await store.sessions.get('s1'))?.state, undefined);
      });

      it('create of an existing id throws and leaves the record unchanged', async () => {
        const store = await open();
        await store.sessions.create(record('s1'));
        await assert.rejects(store.sessions.create(record('s1', { epoch: 'other', principal: 'user:mallory' })));
        assert.deepEqual(await store.sessions.get('s1'), record('s1'));
        assert.equal(await store.sessions.count(), 1);
      });

      it('put replaces an existing record and is a no-op for a missing one', async () => {
        const store = await open();
        await store.sessions.create(record('s1'));
        const updated = record('s1', { epoch: 'epochB', pastEpochs: ['epoch0', 'epoch1', 'epochA'], lastActiveAt: T0 + 9_000 });
        await store.sessions.put(updated);
        assert.deepEqual(await store.sessions.get('s1'), updated);
        await store.sessions.put(record('ghost'));
        assert.equal(await store.sessions.get('ghost'), undefined);
        assert.equal(await store.sessions.count(), 1);
      });

      it('delete removes one record; deleting a missing id is a no-op', async () => {
        const store = await open();
        await store.sessions.create(record('s1'));
        await store.sessions.create(record('s2'));
        await store.sessions.delete('s1');
        assert.equal(await store.sessions.get('s1'), undefined);
        assert.deepEqual(await store.sessions.get('s2'), record('s2'));
        await store.sessions.delete('s1');
        await store.sessions.delete('never');
        assert.equal(await store.sessions.count(), 1);
        await store.sessions.put(record('s1'));
        assert.equal(await store.sessions.get('s1'), undefined, 'put does not resurrect a deleted session');
      });

      it('count follows creates and deletes', async () => {
        const store = await open();
        assert.equal(await store.sessions.count(), 0);
        for (let i = 0; i < 5; i++) await store.sessions.create(record(`s${i}`));
        assert.equal(await store.sessions.count(), 5);
        await store.sessions.delete('s3');
        assert.equal(await store.sessions.count(), 4);
      });

      it('idleSince returns the ids idle since before the cutoff, at most limit', async () => {
        const store = await open();
        for (let i = 0; i < 6; i++) await store.sessions.create(record(`s${i}`, { lastActiveAt: T0 + i * 1000 }));
        const cutoff = T0 + 3000; // s0, s1, s2 are idle; s3 is exactly at the cutoff, so not "before" it
        assert.deepEqual(new Set(await store.sessions.idleSince(cutoff, 100)), new Set(['s0', 's1', 's2']));
        const limited = await store.sessions.idleSince(cutoff, 2);
        assert.equal(limited.length, 2);
        assert.equal(new Set(limited).size, 2);
        for (const id of limited) assert.ok(['s0', 's1', 's2'].includes(id), id);
        assert.deepEqual(await store.sessions.idleSince(T0, 100), []);
        assert.equal((await store.sessions.idleSince(T0 + 100_000, 100)).length, 6);
      });

      it('idleSince sees put and delete', async () => {
        const store = await open();
        await store.sessions.create(record('s1', { lastActiveAt: T0 }));
        await store.sessions.create(record('s2', { lastActiveAt: T0 }));
        await store.sessions.put(record('s1', { lastActiveAt: T0 + 10_000 }));
        await store.sessions.delete('s2');
        assert.deepEqual(await store.sessions.idleSince(T0 + 5_000, 100), []);
        assert.deepEqual(await store.sessions.idleSince(T0 + 20_000, 100), ['s1']);
      });

      it('returned records are copies, and so are stored ones', async () => {
        const store = await open();
        const input = record('s1');
        await store.sessions.create(input);
        input.epoch = 'mutated';
        input.pastEpochs.push('mutated');
        input.lastActiveAt = 1;
        assert.deepEqual(await store.sessions.get('s1'), record('s1'), 'mutating the created object');

        const got = await store.sessions.get('s1');
        assert.ok(got, 'record exists');
        got.epoch = 'mutated';
        got.pastEpochs.push('mutated');
        got.principal = 'user:mallory';
        assert.deepEqual(await store.sessions.get('s1'), record('s1'), 'mutating a returned object');

        const put = record('s1', { epoch: 'epochB' });
        await store.sessions.put(put);
        put.pastEpochs.length = 0;
        put.protocolVersion = 'mutated';
        assert.deepEqual(await store.sessions.get('s1'), record('s1', { epoch: 'epochB' }), 'mutating the put object');
      });
    });

    describe('event log: streams and appends', () => {
      it('openStream creates an empty stream whose head is the seed', async () => {
        const store = await open();
        const w = await stream(store, 'S', 'st1', REQUEST);
        assert.deepEqual(await store.log.head('S', 'st1'), {
          kind: 'request',
          requestIds: ['1', '"req-a"'],
          firstSeq: 1,
          baseChain: w.seed,
          lastSeq: 0,
          lastChain: w.seed,
          closed: false,
        });
        await stream(store, 'S', 'get', STANDALONE);
        const g = await headOf(store, 'S', 'get');
        assert.equal(g.kind, 'standalone');
        assert.deepEqual(g.requestIds, []);
        assert.deepEqual(await store.log.read('S', 'st1', 0, 10), []);
      });

      it('head of an unknown stream or session is undefined', async () => {
        const store = await open();
        await stream(store, 'S', 'st1');
        assert.equal(await store.log.head('S', 'nope'), undefined);
        assert.equal(await store.log.head('nope', 'st1'), undefined);
      });

      it('contiguous appends, single and batched, advance the head and read back in order', async () => {
        const store = await open();
        const w = await stream(store, 'S', 'st');
        await store.log.append('S', 'st', w.messages(1));
        await assertHead(store, 'S', 'st', w, 1);
        await store.log.append('S', 'st', w.messages(3));
        await store.log.append('S', 'st', w.messages(1));
        await store.log.append('S', 'st', w.messages(7));
        assert.equal(w.seq, 12);
        await assertHead(store, 'S', 'st', w, 1);
      });

      it('payloads and timestamps round trip exactly', async () => {
        const store = await open();
        const w = await stream(store, 'S', 'st');
        const payloads = [
          '',
          'a\nb\r\nc\rd',
          '\u0000x\u0000',
          '\u{1F600}\u00e9\u20ac\u4e16',
          ' lead and trail ',
          JSON.stringify({ big: 'y'.repeat(100_000) }),
          '"quoted" \\ back',
          // Large and multibyte (a store may keep large payloads in another form).
          JSON.stringify({ wide: '\u{1F600}\u00e9\u20ac\u4e16\n'.repeat(3_000) }),
        ];
        await store.log.append('S', 'st', w.next(payloads, T0 + 123));
        await store.log.append('S', 'st', w.next(['later'], 0));
        assert.deepEqual(await readAll(store, 'S', 'st'), w.all);
      });

      it('the first append must start at seq 1', async () => {
        const store = await open();
        const w = new StreamWriter('ep', 'st');
        await store.log.openStream('S', 'st', w.seed, REQUEST);
        const events = w.messages(3);
        await assert.rejects(store.log.append('S', 'st', events.slice(1)), isConflict);
        const h = await headOf(store, 'S', 'st');
        assert.equal(h.lastSeq, 0);
        assert.equal(h.lastChain, w.seed);
        assert.deepEqual(await store.log.read('S', 'st', 0, 10), []);
        await store.log.append('S', 'st', events);
        assert.deepEqual(await readAll(store, 'S', 'st'), events);
      });

      it('store-conflict on a gap, a duplicate seq, or a non-contiguous batch; a failed append appends nothing', async () => {
        const store = await open();
        const w = await stream(store, 'S', 'st');
        await store.log.append('S', 'st', w.messages(2));
        const before = await headOf(store, 'S', 'st');
        const good = [...w.all];
        const c = w.chain;
        const ev = (seq: number, payload = `p${seq}`): LogEvent => ({ seq, chain: nextChain(c, payload), payload, at: T0 });

        const bad: Array<[string, LogEvent[]]> = [
          ['gap', [ev(4)]],
          ['duplicate of the last seq', [ev(2)]],
          ['duplicate of an older seq', [ev(1)]],
          ['seq 0', [ev(0)]],
          ['good then gap', [ev(3), ev(5)]],
          ['good then duplicate', [ev(3), ev(3)]],
          ['good, good, then backwards', [ev(3), ev(4), ev(2)]],
          ['good then a long valid tail after a gap', [ev(3), ev(4), ev(6), ev(7), ev(8)]],
        ];
        for (const [label, events] of bad) {
          await assert.rejects(store.log.append('S', 'st', events), isConflict, label);
          assert.deepEqual(await store.log.head('S', 'st'), before, `${label}: head unchanged`);
          assert.deepEqual(await readAll(store, 'S', 'st'), good, `${label}: nothing appended`);
        }
        // The stream still accepts the right continuation.
        await store.log.append('S', 'st', w.messages(2));
        await assertHead(store, 'S', 'st', w, 1);
      });

      it('store-conflict on append to a missing stream or session', async () => {
        const store = await open();
        await stream(store, 'S', 'st');
        const w = new StreamWriter('ep', 'x');
        await assert.rejects(store.log.append('S', 'missing', w.messages(1)), isConflict);
        await assert.rejects(store.log.append('missing', 'st', w.all), isConflict);
        assert.equal(await store.log.head('S', 'missing'), undefined);
        assert.equal(await store.log.head('missing', 'st'), undefined);
        assert.deepEqual(await store.log.streams('S'), ['st']);
        assert.deepEqual(await store.log.streams('missing'), []);
      });

      it('store-conflict on opening an existing stream; the existing one is untouched', async () => {
        const store = await open();
        const w = await stream(store, 'S', 'st');
        await store.log.append('S', 'st', w.messages(3));
        await assert.rejects(store.log.openStream('S', 'st', chainSeed('other', 'st'), STANDALONE), isConflict);
        await assertHead(store, 'S', 'st', w, 1);
        assert.equal((await headOf(store, 'S', 'st')).kind, 'request');
        await store.log.closeStream('S', 'st');
        await assert.rejects(store.log.openStream('S', 'st', w.seed, REQUEST), isConflict, 'a closed stream still exists');
        assert.deepEqual(await store.log.streams('S'), ['st']);
      });

      it('closeStream: closed head, appends refused, events still readable', async () => {
        const store = await open();
        const w = await stream(store, 'S', 'st');
        await store.log.append('S', 'st', w.messages(4));
        await store.log.closeStream('S', 'st');
        const h = await headOf(store, 'S', 'st');
        assert.equal(h.closed, true);
        assert.equal(h.lastSeq, 4);
        const next = new StreamWriter('ep', 'st');
        next.seq = 4;
        next.chain = w.chain;
        await assert.rejects(store.log.append('S', 'st', next.messages(1)), isConflict);
        assert.deepEqual(await readAll(store, 'S', 'st'), w.all);
        assert.equal((await headOf(store, 'S', 'st')).lastSeq, 4);
        await store.log.closeStream('S', 'st'); // idempotent
        assert.equal((await headOf(store, 'S', 'st')).closed, true);
      });

      it('closing one stream leaves the others open', async () => {
        const store = await open();
        await stream(store, 'S', 'a');
        const b = await stream(store, 'S', 'b');
        await store.log.closeStream('S', 'a');
        assert.equal((await headOf(store, 'S', 'b')).closed, false);
        await store.log.append('S', 'b', b.messages(1));
        assert.equal((await headOf(store, 'S', 'b')).lastSeq, 1);
      });

      it('returned heads are copies', async () => {
        const store = await open();
        const w = await stream(store, 'S', 'st');
        await store.log.append('S', 'st', w.messages(2));
        const h = await headOf(store, 'S', 'st');
        const snapshot = structuredClone(h);
        h.requestIds.push('mutated');
        h.lastSeq = 99;
        h.closed = true;
        h.firstSeq = 50;
        assert.deepEqual(await store.log.head('S', 'st'), snapshot);
        await store.log.append('S', 'st', w.messages(1));
        assert.equal((await headOf(store, 'S', 'st')).lastSeq, 3);
      });

      it('the StreamInfo passed to openStream is copied', async () => {
        const store = await open();
        const info: StreamInfo = { kind: 'request', requestIds: ['7'] };
        await store.log.openStream('S', 'st', chainSeed('ep', 'st'), info);
        info.requestIds.push('8');
        info.kind = 'standalone';
        const h = await headOf(store, 'S', 'st');
        assert.equal(h.kind, 'request');
        assert.deepEqual(h.requestIds, ['7']);
      });

      it("streams() lists a session's streams in the order they were opened", async () => {
        const store = await open();
        const names = ['zeta', 'alpha', 'm1', 'get', 'b', 'a0'];
        for (const n of names) await stream(store, 'S', n);
        await stream(store, 'T', 'other');
        assert.deepEqual(await store.log.streams('S'), names);
        assert.deepEqual(await store.log.streams('T'), ['other']);
        assert.deepEqual(await store.log.streams('U'), []);
      });

      it('dropStream removes one stream completely', async () => {
        const store = await open();
        const a = await stream(store, 'S', 'a');
        const b = await stream(store, 'S', 'b');
        const c = await stream(store, 'S', 'c');
        await store.log.append('S', 'a', a.messages(3));
        await store.log.append('S', 'b', b.messages(3));
        await store.log.append('S', 'c', c.messages(3));
        await store.log.dropStream('S', 'b');
        assert.equal(await store.log.head('S', 'b'), undefined);
        assert.deepEqual(await store.log.streams('S'), ['a', 'c']);
        await assert.rejects(store.log.append('S', 'b', new StreamWriter('ep', 'b').messages(1)), isConflict);
        await assertHead(store, 'S', 'a', a, 1);
        await assertHead(store, 'S', 'c', c, 1);
        await store.log.dropStream('S', 'b'); // no-op
        await store.log.dropStream('S', 'never');
        await store.log.dropStream('never', 'a');
        assert.deepEqual(await store.log.streams('S'), ['a', 'c']);

        // A new stream of the same name starts empty: no event of the dropped one survives.
        const b2 = await stream(store, 'S', 'b', STANDALONE);
        const h = await headOf(store, 'S', 'b');
        assert.equal(h.lastSeq, 0);
        assert.equal(h.kind, 'standalone');
        assert.deepEqual(await store.log.read('S', 'b', 0, 100), []);
        await store.log.append('S', 'b', b2.messages(1));
        await assertHead(store, 'S', 'b', b2, 1);
        assert.deepEqual(await store.log.streams('S'), ['a', 'c', 'b']);
      });

      it("dropSession removes the session's streams and no other session's", async () => {
        const store = await open();
        const a = await stream(store, 'A', 'main');
        const a2 = await stream(store, 'A', 'side');
        const b = await stream(store, 'B', 'main');
        await store.log.append('A', 'main', a.messages(5, T0, 'A'));
        await store.log.append('A', 'side', a2.messages(2, T0, 'A2'));
        await store.log.append('B', 'main', b.messages(4, T0, 'B'));
        await store.log.dropSession('A');
        assert.deepEqual(await store.log.streams('A'), []);
        assert.equal(await store.log.head('A', 'main'), undefined);
        assert.equal(await store.log.head('A', 'side'), undefined);
        await assertHead(store, 'B', 'main', b, 1);
        assert.deepEqual(await store.log.streams('B'), ['main']);
        await store.log.dropSession('A'); // no-op
        await store.log.dropSession('never');

        const again = await stream(store, 'A', 'main');
        assert.deepEqual(await store.log.read('A', 'main', 0, 100), []);
        await store.log.append('A', 'main', again.messages(1, T0, 'again'));
        await assertHead(store, 'A', 'main', again, 1);
      });

      it("two sessions with the same stream name never see each other's events", async () => {
        const store = await open();
        const a = await stream(store, 'A', 'main', REQUEST);
        const b = await stream(store, 'B', 'main', STANDALONE);
        assert.notEqual(a.seed, b.seed);
        for (let i = 0; i < 10; i++) {
          await store.log.append('A', 'main', a.messages(1 + (i % 3), T0 + i, 'A'));
          if (i % 2 === 0) await store.log.append('B', 'main', b.messages(2, T0 + i, 'B'));
        }
        assert.notEqual(a.seq, b.seq);
        await assertHead(store, 'A', 'main', a, 1);
        await assertHead(store, 'B', 'main', b, 1);
        assert.equal((await headOf(store, 'A', 'main')).kind, 'request');
        assert.equal((await headOf(store, 'B', 'main')).kind, 'standalone');
        await store.log.closeStream('A', 'main');
        assert.equal((await headOf(store, 'B', 'main')).closed, false);
        await store.log.dropStream('A', 'main');
        await assertHead(store, 'B', 'main', b, 1);
      });

      it('sessions and logs are independent: deleting a session record keeps its log', async () => {
        const store = await open();
        await store.sessions.create(record('S'));
        const w = await stream(store, 'S', 'st');
        await store.log.append('S', 'st', w.messages(2));
        await store.sessions.delete('S');
        await assertHead(store, 'S', 'st', w, 1);
        await store.log.dropSession('S');
        await store.sessions.create(record('T'));
        await store.log.dropSession('T');
        assert.deepEqual(await store.sessions.get('T'), record('T'));
      });
    });

    describe('event log: read', () => {
      it('read(afterSeq, limit) returns exactly the events after afterSeq, at most limit, in order', async () => {
        const store = await open();
        const w = await stream(store, 'S', 'st');
        await store.log.append('S', 'st', w.messages(5));
        await store.log.append('S', 'st', w.messages(15));
        for (const afterSeq of [0, 1, 2, 5, 10, 19, 20, 21, 100]) {
          for (const limit of [1, 2, 3, 7, 20, 1000]) {
            const expected = w.all.filter((e) => e.seq > afterSeq).slice(0, limit);
            assert.deepEqual(plain(await store.log.read('S', 'st', afterSeq, limit)), expected, `afterSeq ${afterSeq}, limit ${limit}`);
          }
        }
      });

      it('paging through with read reproduces the log', async () => {
        const store = await open();
        const w = await stream(store, 'S', 'st');
        await store.log.append('S', 'st', w.messages(103));
        const got: LogEvent[] = [];
        for (let after = 0; ;) {
          const page = await store.log.read('S', 'st', after, 10);
          if (page.length === 0) break;
          assert.ok(page.length <= 10, `page of ${page.length} > limit 10`);
          got.push(...plain(page));
          after = (page[page.length - 1] as LogEvent).seq;
        }
        assert.deepEqual(got, w.all);
      });

      it('read before the retained window starts at firstSeq', async () => {
        const store = await open({ retention: { maxEvents: 5 } });
        const w = await stream(store, 'S', 'st');
        await store.log.append('S', 'st', w.messages(12));
        const retained = w.all.slice(7); // seqs 8..12
        assert.deepEqual(await readAll(store, 'S', 'st'), retained);
        assert.deepEqual(plain(await store.log.read('S', 'st', 3, 2)), retained.slice(0, 2));
        assert.deepEqual(plain(await store.log.read('S', 'st', 7, 100)), retained);
        assert.deepEqual(plain(await store.log.read('S', 'st', 8, 100)), retained.slice(1));
        assert.deepEqual(plain(await store.log.read('S', 'st', 12, 100)), []);
        assert.deepEqual(plain(await store.log.read('S', 'st', 50, 100)), []);
      });
    });

    describe('event log: retention', () => {
      it('maxEvents trims the oldest events; firstSeq and baseChain follow', async () => {
        const store = await open({ retention: { maxEvents: 5 } });
        const w = await stream(store, 'S', 'st');
        await store.log.append('S', 'st', w.messages(3));
        await assertHead(store, 'S', 'st', w, 1);
        await store.log.append('S', 'st', w.messages(2));
        await assertHead(store, 'S', 'st', w, 1);
        await store.log.append('S', 'st', w.messages(1));
        await assertHead(store, 'S', 'st', w, 2);
        for (let i = 0; i < 10; i++) await store.log.append('S', 'st', w.messages(1));
        await assertHead(store, 'S', 'st', w, 12);
        await store.log.append('S', 'st', w.messages(23)); // one batch larger than the window
        assert.equal(w.seq, 39);
        await assertHead(store, 'S', 'st', w, 35);
      });

      it('maxEvents applies per stream', async () => {
        const store = await open({ retention: { maxEvents: 3 } });
        const a = await stream(store, 'S', 'a');
        const b = await stream(store, 'S', 'b');
        const c = await stream(store, 'T', 'a');
        await store.log.append('S', 'a', a.messages(10));
        await store.log.append('S', 'b', b.messages(2));
        await store.log.append('T', 'a', c.messages(3));
        await assertHead(store, 'S', 'a', a, 8);
        await assertHead(store, 'S', 'b', b, 1);
        await assertHead(store, 'T', 'a', c, 1);
      });

      it('maxBytes counts UTF-8 bytes of payloads', async () => {
        // '€' is 1 UTF-16 unit but 3 UTF-8 bytes: each payload is 10 units, 30 bytes.
        const store = await open({ retention: { maxBytes: 100 } });
        const w = await stream(store, 'S', 'st');
        const euro = '\u20ac'.repeat(10);
        assert.equal(utf8(euro), 30);
        await store.log.append('S', 'st', w.next([euro, euro, euro]));
        await assertHead(store, 'S', 'st', w, 1); // 90 bytes
        await store.log.append('S', 'st', w.next([euro]));
        await assertHead(store, 'S', 'st', w, 2); // 120 > 100: drop one
        await store.log.append('S', 'st', w.next([euro, euro, euro, euro, euro]));
        await assertHead(store, 'S', 'st', w, 7);
      });

      it('maxBytes with mixed 1-, 2-, 3- and 4-byte characters keeps the longest suffix that fits', async () => {
        const maxBytes = 200;
        const store = await open({ retention: { maxBytes } });
        const w = await stream(store, 'S', 'st');
        const pieces = ['a', '\u00e9', '\u4e16', '\u{1F600}'];
        for (let i = 0; i < 40; i++) {
          const payload = (pieces[i % 4] as string).repeat(1 + (i % 7));
          await store.log.append('S', 'st', w.next([payload]));
          let bytes = 0;
          let firstSeq = w.seq + 1;
          while (firstSeq > 1 && bytes + utf8((w.all[firstSeq - 2] as LogEvent).payload) <= maxBytes) {
            firstSeq--;
            bytes += utf8((w.all[firstSeq - 1] as LogEvent).payload);
          }
          assert.equal((await headOf(store, 'S', 'st')).firstSeq, firstSeq, `after event ${w.seq}`);
        }
        const h = await headOf(store, 'S', 'st');
        await assertHead(store, 'S', 'st', w, h.firstSeq);
        const retainedBytes = (await readAll(store, 'S', 'st')).reduce((n, e) => n + utf8(e.payload), 0);
        assert.ok(retainedBytes <= maxBytes, `retained ${retainedBytes} bytes`);
      });

      it('an event larger than maxBytes trims everything: firstSeq = lastSeq + 1, baseChain = lastChain', async () => {
        const store = await open({ retention: { maxBytes: 10 } });
        const w = await stream(store, 'S', 'st');
        await store.log.append('S', 'st', w.next(['12345']));
        await store.log.append('S', 'st', w.next(['\u{1F600}\u{1F600}\u{1F600}'])); // 12 bytes
        const h = await headOf(store, 'S', 'st');
        assert.equal(h.lastSeq, 2);
        assert.equal(h.firstSeq, 3);
        assert.equal(h.baseChain, h.lastChain);
        assert.equal(h.baseChain, w.chain);
        assert.deepEqual(await store.log.read('S', 'st', 0, 100), []);
        await store.log.append('S', 'st', w.next(['ok']));
        await assertHead(store, 'S', 'st', w, 3);
      });

      it('maxAgeMs trims events older than the injected clock allows', async () => {
        let now = T0;
        const store = await open({ retention: { maxAgeMs: 1000 }, now: () => now });
        const w = await stream(store, 'S', 'st');
        await store.log.append('S', 'st', w.messages(2, now)); // seqs 1-2 at T0
        now = T0 + 500;
        await store.log.append('S', 'st', w.messages(2, now)); // seqs 3-4 at T0+500
        await assertHead(store, 'S', 'st', w, 1);
        now = T0 + 1200;
        await store.log.append('S', 'st', w.messages(1, now)); // seq 5; cutoff T0+200
        await assertHead(store, 'S', 'st', w, 3);
        now = T0 + 1800;
        await store.log.append('S', 'st', w.messages(1, now)); // seq 6; cutoff T0+800
        await assertHead(store, 'S', 'st', w, 5);
        now = T0 + 10_000;
        await store.log.append('S', 'st', w.messages(1, now)); // seq 7; cutoff T0+9000
        await assertHead(store, 'S', 'st', w, 7);
      });

      it('without a maxAgeMs, old events are kept', async () => {
        let now = T0;
        const store = await open({ retention: { maxEvents: 100 }, now: () => now });
        const w = await stream(store, 'S', 'st');
        await store.log.append('S', 'st', w.messages(3, 0));
        now = T0 + 365 * 24 * 3600 * 1000;
        await store.log.append('S', 'st', w.messages(1, now));
        await assertHead(store, 'S', 'st', w, 1);
      });

      it('retention on a closed stream keeps it closed and readable', async () => {
        const store = await open({ retention: { maxEvents: 2 } });
        const w = await stream(store, 'S', 'st');
        await store.log.append('S', 'st', w.messages(5));
        await store.log.closeStream('S', 'st');
        const h = await headOf(store, 'S', 'st');
        assert.equal(h.closed, true);
        assert.equal(h.firstSeq, 4);
        assert.equal(h.baseChain, w.chainOf(3));
        assert.deepEqual(await readAll(store, 'S', 'st'), w.all.slice(3));
      });
    });

    ownershipContract(() => open());

    describe('event log: volume', () => {
      it('two sessions writing 10,000 events each, interleaved, read back exactly', async () => {
        const store = await open();
        const a = await stream(store, 'A', 'main');
        const b = await stream(store, 'B', 'main');
        const total = 10_000;
        let step = 0;
        while (a.seq < total || b.seq < total) {
          step++;
          const na = Math.min(total - a.seq, 1 + (step % 37));
          const nb = Math.min(total - b.seq, 1 + ((step * 7) % 23));
          await Promise.all([
            na > 0 ? store.log.append('A', 'main', a.messages(na, T0 + step, 'A')) : Promise.resolve(),
            nb > 0 ? store.log.append('B', 'main', b.messages(nb, T0 + step, 'B')) : Promise.resolve(),
          ]);
        }
        for (const [session, w] of [
          ['A', a],
          ['B', b],
        ] as const) {
          const h = await headOf(store, session, 'main');
          assert.equal(h.lastSeq, total);
          assert.equal(h.firstSeq, 1);
          assert.equal(h.lastChain, w.chain);
          const got: LogEvent[] = [];
          for (let after = 0; after < total; after += 1000) {
            const page = await store.log.read(session, 'main', after, 1000);
            assert.equal(page.length, 1000);
            got.push(...plain(page));
          }
          assert.deepEqual(got, w.all);
          // Spot-check the chain: every event continues the previous one.
          let c = w.seed;
          for (const e of got) {
            c = nextChain(c, e.payload);
            assert.equal(e.chain, c);
          }
        }
      });
    });
  });
}
