/**
 * The ownership, fencing and bus part of the store contract, run on every store by
 * {@link storeContract}. Leases run on each store's own clock (Redis: the server's), so
 * expiry is awaited with short real leases, never assumed.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chainSeed, nextChain } from '../../src/protocol/event-id.js';
import { isContinuityError } from '../../src/protocol/errors.js';
import type { AppendNotice, LogEvent, SessionRecord, Store, StreamInfo } from '../../src/store/types.js';
import { waitFor } from '../helpers/wait.js';

const REQUEST: StreamInfo = { kind: 'request', requestIds: ['1'] };
const T0 = 1_700_000_000_000;
/** Longer than any test here runs: a lease that must not lapse by itself. */
const LONG = 60_000;
/** A lease meant to lapse. */
const SHORT = 30;

function isFenced(err: unknown): boolean {
  return isContinuityError(err, 'store-fenced');
}

function record(id: string, patch: Partial<SessionRecord> = {}): SessionRecord {
  return {
    id,
    epoch: 'e1',
    pastEpochs: [],
    protocolVersion: '2025-11-25',
    initialize: '{"method":"initialize"}',
    createdAt: T0,
    lastActiveAt: T0,
    ...patch,
  };
}

/** Contiguous chained events of one stream, tagged by writer. */
class Writer {
  seq = 0;
  chain: string;
  readonly seed: string;
  constructor(stream: string) {
    this.seed = chainSeed('e1', stream);
    this.chain = this.seed;
  }
  /** The next `n` events after `seq`, without advancing (a writer may be refused). */
  peek(n: number, tag: string): LogEvent[] {
    let chain = this.chain;
    return Array.from({ length: n }, (_, i) => {
      const payload = JSON.stringify({ tag, n: this.seq + i + 1 });
      chain = nextChain(chain, payload);
      return { seq: this.seq + i + 1, chain, payload, at: T0 };
    });
  }
  commit(events: readonly LogEvent[]): void {
    const last = events[events.length - 1];
    if (last) {
      this.seq = last.seq;
      this.chain = last.chain;
    }
  }
}

/** Waits until the live lease of `session` has lapsed. */
async function lapsed(store: Store, session: string): Promise<void> {
  await waitFor(async () => (await store.ownership.current(session)) === undefined, `the lease of ${session} to lapse`);
}

export function ownershipContract(open: () => Promise<Store>): void {
  describe('ownership', () => {
    it('acquire takes a free session with token 1; the owner re-acquires and renews; others get the holder back', async () => {
      const store = await open();
      assert.equal(await store.ownership.current('S'), undefined);
      const a = await store.ownership.acquire('S', 'A', LONG);
      assert.equal(a.owner, 'A');
      assert.equal(a.token, 1);
      assert.ok(a.expiresAt > T0, 'expiresAt is a time');
      assert.deepEqual(await store.ownership.current('S'), a);
      const again = await store.ownership.acquire('S', 'A', LONG);
      assert.equal(again.token, 1, 'the same owner keeps its token');
      assert.ok(again.expiresAt >= a.expiresAt);
      const b = await store.ownership.acquire('S', 'B', LONG);
      assert.equal(b.owner, 'A', 'B is told who holds it');
      assert.equal(b.token, 1);
      assert.equal(await store.ownership.renew('S', 'A', 1, LONG), true);
      assert.equal(await store.ownership.renew('S', 'B', 1, LONG), false, 'not the owner');
      assert.equal(await store.ownership.renew('S', 'A', 2, LONG), false, 'not the token');
      assert.equal((await store.ownership.acquire('T', 'B', LONG)).token, 1, 'sessions are independent');
    });

    it('takeover after expiry raises the token; the old owner can no longer renew', async () => {
      const store = await open();
      await store.ownership.acquire('S', 'A', SHORT);
      await lapsed(store, 'S');
      const b = await store.ownership.acquire('S', 'B', LONG);
      assert.equal(b.owner, 'B');
      assert.equal(b.token, 2);
      assert.equal(await store.ownership.renew('S', 'A', 1, LONG), false);
      assert.deepEqual(await store.ownership.current('S'), b);
      await store.ownership.release('S', 'A', 1); // a stale release is a no-op
      assert.deepEqual(await store.ownership.current('S'), b);
    });

    it('release frees the session at once and keeps the token rising', async () => {
      const store = await open();
      const a = await store.ownership.acquire('S', 'A', LONG);
      await store.ownership.release('S', 'A', a.token);
      assert.equal(await store.ownership.current('S'), undefined);
      const b = await store.ownership.acquire('S', 'B', LONG);
      assert.equal(b.owner, 'B');
      assert.equal(b.token, 2);
      await store.ownership.release('S', 'B', b.token);
      const a2 = await store.ownership.acquire('S', 'A', LONG);
      assert.equal(a2.token, 3, 'back to A is a change of owner too');
    });

    it('an owner whose lease lapsed with nobody taking it keeps its token, and may renew', async () => {
      const store = await open();
      await store.ownership.acquire('S', 'A', SHORT);
      await lapsed(store, 'S');
      assert.equal(await store.ownership.renew('S', 'A', 1, LONG), true);
      assert.equal((await store.ownership.current('S'))?.owner, 'A');
      await store.ownership.release('S', 'A', 1);
      assert.equal((await store.ownership.acquire('S', 'A', LONG)).token, 1);
    });

    it('concurrent acquires: exactly one owner wins', async () => {
      const store = await open();
      const owners = ['A', 'B', 'C', 'D', 'E'];
      const leases = await Promise.all(owners.map((o) => store.ownership.acquire('S', o, LONG)));
      const winners = new Set(leases.map((l) => l.owner));
      assert.equal(winners.size, 1, `one owner, got ${[...winners].join(', ')}`);
      assert.ok(leases.every((l) => l.token === 1));
    });

    it('bad owner or leaseMs is a RangeError/TypeError before anything is written', async () => {
      const store = await open();
      await assert.rejects(store.ownership.acquire('S', '', LONG), TypeError);
      await assert.rejects(store.ownership.acquire('S', 'A', 0), RangeError);
      await assert.rejects(store.ownership.acquire('S', 'A', Number.NaN), RangeError);
      await assert.rejects(store.ownership.renew('S', 'A', 1, -5), RangeError);
      assert.equal(await store.ownership.current('S'), undefined);
    });
  });

  describe('fencing', () => {
    async function owned(store: Store): Promise<{ w: Writer; token: number }> {
      await store.sessions.create(record('S'));
      const { token } = await store.ownership.acquire('S', 'A', SHORT);
      const w = new Writer('st');
      await store.log.openStream('S', 'st', w.seed, REQUEST, token);
      const first = w.peek(3, 'A');
      await store.log.append('S', 'st', first, token);
      w.commit(first);
      return { w, token };
    }

    it('a paused old owner cannot write after a takeover, and its refused writes leave no trace', async () => {
      const store = await open();
      const { w, token: old } = await owned(store);
      // A stalls; its lease lapses and B takes over.
      await lapsed(store, 'S');
      const b = await store.ownership.acquire('S', 'B', LONG);
      assert.equal(b.token, old + 1, 'takeover raises the token');
      const before = await store.log.head('S', 'st');
      const recordBefore = await store.sessions.get('S');

      // A wakes up and carries on with its old token: every write is refused.
      const stale = w.peek(2, 'A-after-pause');
      await assert.rejects(store.log.append('S', 'st', stale, old), isFenced, 'append');
      await assert.rejects(store.log.closeStream('S', 'st', old), isFenced, 'closeStream');
      await assert.rejects(store.log.openStream('S', 'st2', chainSeed('e1', 'st2'), REQUEST, old), isFenced, 'openStream');
      await assert.rejects(store.sessions.put(record('S', { epoch: 'by-A', lastActiveAt: T0 + 9 }), old), isFenced, 'put');
      assert.deepEqual(await store.log.head('S', 'st'), before, 'head unchanged');
      assert.equal((await store.log.read('S', 'st', 0, 100)).length, 3, 'no event written');
      assert.deepEqual(await store.log.streams('S'), ['st'], 'no stream opened');
      assert.deepEqual(await store.sessions.get('S'), recordBefore, 'record unchanged');

      // B continues the same stream with its token.
      const next = w.peek(2, 'B');
      await store.log.append('S', 'st', next, b.token);
      w.commit(next);
      await store.sessions.put(record('S', { epoch: 'by-B' }), b.token);
      await store.log.closeStream('S', 'st', b.token);
      const events = await store.log.read('S', 'st', 0, 100);
      assert.deepEqual(
        events.map((e) => JSON.parse(e.payload).tag),
        ['A', 'A', 'A', 'B', 'B'],
      );
      const h = await store.log.head('S', 'st');
      assert.equal(h?.lastChain, w.chain);
      assert.equal(h?.closed, true);
      assert.equal((await store.sessions.get('S'))?.epoch, 'by-B');
    });

    it('the session state is written only under the current token', async () => {
      const store = await open();
      await store.sessions.create(record('S', { state: '{"journal":["a"]}' }));
      const a = await store.ownership.acquire('S', 'A', SHORT);
      await store.sessions.put(record('S', { state: '{"journal":["a","b"]}' }), a.token);
      await lapsed(store, 'S');
      const b = await store.ownership.acquire('S', 'B', LONG);
      await assert.rejects(store.sessions.put(record('S', { state: '{"journal":["by-A"]}' }), a.token), isFenced);
      assert.equal((await store.sessions.get('S'))?.state, '{"journal":["a","b"]}', 'the old owner wrote nothing');
      await store.sessions.put(record('S', { state: '{"journal":["by-B"]}' }), b.token);
      assert.equal((await store.sessions.get('S'))?.state, '{"journal":["by-B"]}');
    });

    it("racing appends from the old and the new owner: only the new owner's land", async () => {
      const store = await open();
      const { w, token: old } = await owned(store);
      await lapsed(store, 'S');
      const b = await store.ownership.acquire('S', 'B', LONG);
      const fromA = w.peek(4, 'A');
      const fromB = w.peek(4, 'B');
      const [ra, rb] = await Promise.allSettled([store.log.append('S', 'st', fromA, old), store.log.append('S', 'st', fromB, b.token)]);
      assert.equal(ra.status, 'rejected');
      assert.ok(isFenced(ra.reason));
      assert.equal(rb.status, 'fulfilled');
      const tags = (await store.log.read('S', 'st', 3, 100)).map((e) => JSON.parse(e.payload).tag);
      assert.deepEqual(tags, ['B', 'B', 'B', 'B']);
    });

    it('a fence is refused on a session nobody owns, and after the session was deleted', async () => {
      const store = await open();
      const w = new Writer('st');
      await assert.rejects(store.log.openStream('S', 'st', w.seed, REQUEST, 1), isFenced);
      assert.deepEqual(await store.log.streams('S'), []);
      await store.sessions.create(record('S'));
      const { token } = await store.ownership.acquire('S', 'A', LONG);
      await store.log.openStream('S', 'st', w.seed, REQUEST, token);
      await store.sessions.delete('S');
      await assert.rejects(store.log.append('S', 'st', w.peek(1, 'A'), token), isFenced, 'the lease went with the session');
      assert.equal((await store.log.head('S', 'st'))?.lastSeq, 0);
    });

    it('a fenced write is checked before the log rules: a stale token gets store-fenced, not store-conflict', async () => {
      const store = await open();
      const { w, token } = await owned(store);
      await assert.rejects(store.log.append('S', 'st', w.peek(1, 'A'), token + 1), isFenced);
      await assert.rejects(store.log.append('S', 'missing', w.peek(1, 'A'), token + 7), isFenced);
      // Without a fence, writes are not checked against leases (single-owner use).
      const next = w.peek(1, 'unfenced');
      await store.log.append('S', 'st', next);
      assert.equal((await store.log.head('S', 'st'))?.lastSeq, 4);
    });
  });

  describe('bus', () => {
    it("delivers the store's own append and close notices, in order, to subscribers of that session only", async () => {
      const store = await open();
      const bus = store.bus;
      assert.ok(bus, `${store.name} has a bus`);
      const got: AppendNotice[] = [];
      const other: AppendNotice[] = [];
      const unsubscribe = await bus.subscribeAppends('S', (n) => got.push(n));
      const unsubscribeOther = await bus.subscribeAppends('T', (n) => other.push(n));
      const w = new Writer('st');
      await store.log.openStream('S', 'st', w.seed, REQUEST);
      for (const n of [1, 3, 2]) {
        const events = w.peek(n, 'x');
        await store.log.append('S', 'st', events);
        w.commit(events);
      }
      await store.log.closeStream('S', 'st');
      const expected: AppendNotice[] = [
        { session: 'S', stream: 'st', lastSeq: 1, closed: false },
        { session: 'S', stream: 'st', lastSeq: 4, closed: false },
        { session: 'S', stream: 'st', lastSeq: 6, closed: false },
        { session: 'S', stream: 'st', lastSeq: 6, closed: true },
      ];
      await waitFor(() => got.length >= expected.length, 'four notices');
      assert.deepEqual(got, expected);
      assert.deepEqual(other, []);

      // publishAppend reaches subscribers too; after unsubscribing, nothing arrives.
      await bus.publishAppend('S', 'other stream', 42);
      await waitFor(() => got.length === 5, 'the published notice');
      assert.deepEqual(got[4], { session: 'S', stream: 'other stream', lastSeq: 42, closed: false });
      await unsubscribe();
      await unsubscribe(); // idempotent
      await bus.publishAppend('T', 'st', 1);
      await waitFor(() => other.length === 1, 'the notice on T');
      await bus.publishAppend('S', 'st', 7);
      await bus.publishAppend('T', 'st', 2);
      await waitFor(() => other.length === 2, 'the second notice on T');
      assert.equal(got.length, 5, 'no notice after unsubscribe');
      await unsubscribeOther();
    });

    it("carries messages to an owner's inbox and says whether anyone received them", async () => {
      const store = await open();
      const bus = store.bus;
      assert.ok(bus);
      assert.equal(await bus.sendToOwner('replica-A', 'nobody'), 0);
      const a1: string[] = [];
      const a2: string[] = [];
      const b: string[] = [];
      const u1 = await bus.subscribeInbox('replica-A', (m) => a1.push(m));
      const u2 = await bus.subscribeInbox('replica-A', (m) => a2.push(m));
      const u3 = await bus.subscribeInbox('replica-B', (m) => b.push(m));
      const message = JSON.stringify({ jsonrpc: '2.0', id: 'x', result: { text: 'é \u{1F600} \n "q"' } });
      // Receivers are connections (one per store object), not listeners: at least one here.
      assert.ok((await bus.sendToOwner('replica-A', message)) >= 1);
      await waitFor(() => a1.length === 1 && a2.length === 1, 'both subscribers of A');
      assert.deepEqual([a1[0], a2[0]], [message, message]);
      await u1();
      assert.equal(await bus.sendToOwner('replica-A', 'second'), 1);
      assert.equal(await bus.sendToOwner('replica-B', 'to B'), 1);
      await waitFor(() => a2.length === 2 && b.length === 1, 'the second messages');
      assert.deepEqual(a1, [message]);
      assert.deepEqual(b, ['to B']);
      await u2();
      await u3();
      assert.equal(await bus.sendToOwner('replica-A', 'gone'), 0);
    });

    it('a throwing listener does not stop the others', async () => {
      const store = await open();
      const bus = store.bus;
      assert.ok(bus);
      const warnings: string[] = [];
      const onWarning = (w: Error): void => void warnings.push(w.message);
      process.on('warning', onWarning);
      try {
        const got: number[] = [];
        const u1 = await bus.subscribeAppends('S', () => {
          throw new Error('listener bug');
        });
        const u2 = await bus.subscribeAppends('S', (n) => got.push(n.lastSeq));
        await bus.publishAppend('S', 'st', 5);
        await waitFor(() => got.length === 1 && warnings.length === 1, 'the good listener and the warning');
        assert.match(warnings[0] as string, /listener bug/);
        await u1();
        await u2();
      } finally {
        process.off('warning', onWarning);
      }
    });
  });
}
