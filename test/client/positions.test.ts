import { test } from 'node:test';
import assert from 'node:assert/strict';
import { memoryCheckpoint, type CheckpointStore, type SessionCheckpoint } from '../../src/client/checkpoint.js';
import { StreamPositions } from '../../src/client/positions.js';
import { createStreamVerifier } from '../../src/client/verifier.js';
import { chainSeed, formatEventId, nextChain } from '../../src/protocol/event-id.js';
import { waitFor } from '../helpers/wait.js';

test('stream positions stay bounded however many requests a long-lived client makes', async () => {
  const store = memoryCheckpoint({ maxStreams: 10_000 });
  const positions = new StreamPositions(
    store,
    () => ({ sessionId: 's', protocolVersion: '2025-11-25', epoch: null, initialize: undefined, standalone: undefined }),
    () => {},
  );
  const standalone = {};
  positions.markStandalone(standalone);
  positions.record(standalone, { stream: 'x', lastId: 'g-1', scheme: 'opaque' });
  for (let i = 0; i < 5000; i++) positions.record({}, { stream: 'x', lastId: `r-${i}`, scheme: 'opaque' }, i % 2 === 0);
  await positions.save();
  const saved = await store.load();
  const keys = Object.keys(saved?.streams ?? {});
  assert.ok(keys.length <= 256, `kept ${keys.length} positions`);
  assert.ok(keys.includes('standalone'), 'the standalone stream is never forgotten');
  assert.ok(keys.includes('request-5000'), 'the newest request is kept');
});

/** A real verifier fed `n` events of one chained stream: the live source the transport hands over. */
function liveStream(name: string, epoch = 'q3Zt9xKc0bYw_1-A') {
  const verifier = createStreamVerifier({ epoch });
  let chain = chainSeed(epoch, name);
  let seq = 0;
  return {
    checkpoint: () => verifier.checkpoint(),
    /** Checks the next `n` events. */
    feed(n: number): void {
      for (let i = 0; i < n; i++) {
        const data = `{"n":${++seq}}`;
        chain = nextChain(chain, data);
        assert.equal(verifier.check(formatEventId({ epoch, stream: name, seq, chain }), data).kind, 'continuous');
      }
    },
    get lastId(): string {
      return formatEventId({ epoch, stream: name, seq, chain });
    },
  };
}

function session(store = memoryCheckpoint()) {
  const positions = new StreamPositions(
    store,
    () => ({ sessionId: 's', protocolVersion: '2025-11-25', epoch: 'q3Zt9xKc0bYw_1-A', initialize: undefined, standalone: undefined }),
    () => {},
  );
  return { store, positions, saved: async () => (await positions.save(), (await store.load())?.streams ?? {}) };
}

test('a live stream is saved where it stands at the save, however many events moved it', async () => {
  const { positions, saved } = session();
  const s = liveStream('1');
  const before = Date.now();
  s.feed(1);
  positions.advanced(s);
  s.feed(500);
  for (let i = 0; i < 500; i++) positions.advanced(s);
  const streams = await saved();
  assert.equal(streams['1']?.lastId, s.lastId);
  assert.equal(streams['1']?.seq, 501);
  assert.ok((streams['1']?.updatedAt ?? 0) >= before, 'stamped when it moved');
  const stamp = streams['1']?.updatedAt;
  assert.equal((await saved())['1']?.updatedAt, stamp, 'not moved since: not restamped');
});

test('a stream recorded as complete stays at that position', async () => {
  const { positions, saved } = session();
  const s = liveStream('2');
  s.feed(3);
  positions.advanced(s);
  const end = s.checkpoint();
  assert.ok(end);
  positions.record(s, end, true);
  s.feed(2); // not advanced: the stream ended at 3
  const streams = await saved();
  assert.equal(streams['2']?.seq, 3);
  assert.equal(streams['2']?.complete, true);
});

test('a new stream on the same key takes the slot over; the old one, moving again, takes it back', async () => {
  const { positions, saved } = session();
  const old = liveStream('3');
  const next = liveStream('3');
  old.feed(5);
  positions.advanced(old);
  next.feed(2);
  positions.advanced(next);
  assert.equal((await saved())['3']?.seq, 2);
  old.feed(1);
  positions.advanced(old);
  assert.equal((await saved())['3']?.seq, 6);
});

test('after clear, a stream that moves again is saved again', async () => {
  const { positions, saved } = session();
  const s = liveStream('4');
  s.feed(2);
  positions.advanced(s);
  positions.clear();
  assert.deepEqual(await saved(), {});
  s.feed(1);
  positions.advanced(s);
  assert.equal((await saved())['4']?.seq, 3);
});

test('a trimmed stream that moves again is saved again', async () => {
  const { positions, saved } = session(memoryCheckpoint({ maxStreams: 10_000 }));
  const first = liveStream('first');
  first.feed(1);
  positions.advanced(first);
  const others = Array.from({ length: 300 }, (_, i) => liveStream(`s${i}`));
  for (const o of others) {
    o.feed(1);
    positions.advanced(o);
  }
  assert.equal((await saved()).first, undefined, 'the oldest was trimmed');
  first.feed(1);
  positions.advanced(first);
  assert.equal((await saved()).first?.seq, 2);
});

test('one scheduled save at a time: a store slower than the interval gets the latest position when free, not a queue', async () => {
  // A store as a user may plug in, whose writes finish when the test says.
  const inner = memoryCheckpoint();
  const saves: SessionCheckpoint[] = [];
  const releases: Array<() => void> = [];
  const slow: CheckpointStore = {
    load: () => inner.load(),
    clear: () => inner.clear(),
    async save(checkpoint) {
      saves.push(checkpoint);
      await new Promise<void>((resolve) => releases.push(resolve));
      await inner.save(checkpoint);
    },
  };
  const { positions } = session(slow);
  const s = liveStream('5');
  s.feed(1);
  positions.advanced(s);
  positions.schedule(0);
  await waitFor(() => saves.length === 1, 'the first save');
  for (let i = 0; i < 50; i++) {
    s.feed(1);
    positions.advanced(s);
    positions.schedule(0);
  }
  // A timer set now fires after any the schedules above could have set (same delay, set later).
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.equal(saves.length, 1, 'no second save while the first is running');
  releases.shift()?.();
  await waitFor(() => saves.length === 2, 'the save of what moved meanwhile');
  assert.equal(saves[1]?.streams['5']?.seq, 51);
  releases.shift()?.();
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.equal(saves.length, 2, 'nothing moved since: no third save');
  assert.equal((await inner.load())?.streams['5']?.seq, 51);
});
