/**
 * The outbound stream's group commit, against a real memory store wrapped so a test can
 * hold its writes: batching stays (many events per store write), a batch closes at the
 * turn bound (the event loop is never held for a whole batch), a slow store does not hold
 * `append` below the backlog limit, and the backlog is counted in UTF-8 bytes.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { OutboundStream, TURN_BYTES, type StreamHost } from '../../src/server/stream/outbound-stream.js';
import type { EventSink } from '../../src/server/stream/event-sink.js';
import { memoryStore } from '../../src/store/memory/index.js';
import type { EventLog, LogEvent } from '../../src/store/types.js';
import { chainSeed, nextChain, parseEventId } from '../../src/protocol/event-id.js';
import { isContinuityError } from '../../src/protocol/errors.js';
import { waitFor, within } from '../helpers/wait.js';

/** A memory log whose appends can be held at a gate, recording every batch it is given. */
function gatedLog(): { log: EventLog; batches: LogEvent[][]; hold(): void; release(): void } {
  const inner = memoryStore({ retention: { maxEvents: 1_000_000, maxBytes: 1 << 30 } }).log;
  const batches: LogEvent[][] = [];
  let gate: Promise<void> | undefined;
  let open: (() => void) | undefined;
  const log: EventLog = {
    openStream: (...a) => inner.openStream(...a),
    async append(session, stream, events) {
      batches.push([...events]);
      if (gate) await gate;
      return inner.append(session, stream, events);
    },
    read: (...a) => inner.read(...a),
    head: (...a) => inner.head(...a),
    closeStream: (...a) => inner.closeStream(...a),
    streams: (...a) => inner.streams(...a),
    dropStream: (...a) => inner.dropStream(...a),
    dropSession: (...a) => inner.dropSession(...a),
  };
  return {
    log,
    batches,
    hold() {
      gate = new Promise((resolve) => (open = resolve));
    },
    release() {
      gate = undefined;
      open?.();
    },
  };
}

/** A sink that keeps what it is given. */
function collectingSink(): EventSink & { events: Array<{ id: string; data: string }> } {
  const events: Array<{ id: string; data: string }> = [];
  return {
    events,
    ended: false,
    write(batch) {
      for (const e of batch) events.push({ id: e.id, data: e.data });
      return true;
    },
    retry: () => true,
    drained: () => Promise.resolve(),
    close() {},
    cut() {},
    takenOver() {},
  };
}

async function openStream(log: EventLog): Promise<OutboundStream> {
  const host: StreamHost = {
    sessionId: 'sess',
    epoch: 'EPOCH0',
    fence: undefined,
    log,
    replayPageSize: 512,
    // A frozen clock: only the byte bound closes batches here, so the tests are deterministic.
    now: () => 1_000,
    onStreamComplete: () => {},
    onStoreFailure: (error) => {
      throw error;
    },
  };
  return OutboundStream.open(host, 'standalone', { kind: 'standalone', requestIds: [] });
}

const KIB = 'x'.repeat(1024);

describe('group commit', () => {
  it('batches many events per store write, but closes a batch at the turn bound', async () => {
    const g = gatedLog();
    const stream = await openStream(g.log);
    const n = 400;
    for (let i = 0; i < n; i++) await stream.append(KIB);
    await waitFor(() => g.batches.reduce((s, b) => s + b.length, 0) === n, 'every event stored');
    const sizes = g.batches.map((b) => b.length);
    const bound = Math.ceil(TURN_BYTES / 1024);
    assert.ok(Math.max(...sizes) <= bound, `no batch beyond the turn bound (${bound} events): ${sizes.join(',')}`);
    assert.ok(Math.max(...sizes) > 1, `batching stays: ${sizes.join(',')}`);
  });

  it('never holds the event loop for a whole burst: a macrotask runs while a producer appends', async () => {
    const g = gatedLog();
    const stream = await openStream(g.log);
    let appended = 0;
    let seenAt = -1;
    setImmediate(() => (seenAt = appended));
    for (let i = 0; i < 2_000; i++) {
      await stream.append(KIB);
      appended++;
    }
    const bound = Math.ceil(TURN_BYTES / 1024);
    assert.ok(seenAt >= 0 && seenAt <= bound, `the other task ran after ${seenAt} appends (turn bound: ${bound})`);
  });

  it('a slow store does not hold append below the backlog limit; nothing is delivered before it is stored', async () => {
    const g = gatedLog();
    const stream = await openStream(g.log);
    const sink = collectingSink();
    await stream.attach(sink, 0);
    g.hold();
    // 200 KiB: several turns' worth, well under the backlog limit.
    for (let i = 0; i < 200; i++) await within(stream.append(`${i}:${KIB}`), `append ${i} while the store is held`);
    assert.equal(g.batches.length, 1, 'one store write in flight, the rest waiting to go together');
    assert.equal(sink.events.length, 0, 'nothing reaches the reader before it is in the log');
    g.release();
    await waitFor(() => sink.events.length === 200, 'all events delivered once stored');
    assert.ok(g.batches.length < 200, `group commit: ${g.batches.length} store writes for 200 events`);
    // Same IDs and chain as an independent computation: the protocol is unchanged.
    let chain = chainSeed('EPOCH0', 'standalone');
    sink.events.forEach((e, i) => {
      chain = nextChain(chain, `${i}:${KIB}`);
      assert.deepEqual(parseEventId(e.id), { epoch: 'EPOCH0', stream: 'standalone', seq: i + 1, chain });
      assert.equal(e.data, `${i}:${KIB}`);
    });
  });

  it('counts the backlog in UTF-8 bytes: multi-byte text reaches the limit at its byte size', async () => {
    const g = gatedLog();
    const stream = await openStream(g.log);
    g.hold();
    await stream.append('first');
    // 600k two-byte characters: 600k UTF-16 units (under 1 MiB) but 1.2 MB of UTF-8.
    let settled = false;
    const big = stream.append('é'.repeat(600_000)).then(() => (settled = true));
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    assert.equal(settled, false, 'the producer waits for the store once the byte backlog is over the limit');
    g.release();
    await within(big, 'append resolves once the log has caught up');
  });

  it("carries each payload's byte count to the store", async () => {
    const g = gatedLog();
    const stream = await openStream(g.log);
    const payloads = ['', 'ascii', 'é€', '😀x', '\uD800lone', JSON.stringify({ text: 'naïve 😀' })];
    for (const p of payloads) await stream.append(p);
    await waitFor(() => g.batches.flat().length === payloads.length, 'all stored');
    assert.deepEqual(
      g.batches.flat().map((e) => e.bytes),
      payloads.map((p) => Buffer.byteLength(p, 'utf8')),
    );
  });

  it('paces a producer to a live reader that is behind; a reader that never drains is waited for once', async () => {
    const g = gatedLog();
    const stream = await openStream(g.log);
    let drain: (() => void) | undefined;
    let stalled = true;
    const sink = collectingSink();
    sink.drained = () => (stalled ? new Promise<void>((resolve) => (drain = resolve)) : Promise.resolve());
    await stream.attach(sink, 0);
    let appended = 0;
    const producer = (async () => {
      for (let i = 0; i < 100; i++) {
        await stream.append(KIB);
        appended++;
      }
    })();
    await waitFor(() => drain !== undefined, 'the producer waits for the reader');
    const before = appended;
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
    assert.equal(appended, before, 'no appends while the reader is behind');
    assert.ok(before <= Math.ceil(TURN_BYTES / 1024), `at most one turn went ahead of the reader (${before})`);
    stalled = false;
    drain?.();
    await within(producer, 'the producer finishes once the reader reads');
    await waitFor(() => sink.events.length === 100, 'all delivered');

    // A reader that never drains is waited for once, boundedly; then it is stalled and the
    // producer goes on without waiting for it again (it is cut at its buffer limit instead).
    const never = collectingSink();
    let waits = 0;
    never.drained = () => {
      waits++;
      return new Promise<void>(() => {});
    };
    const second = await openStream(gatedLog().log);
    await second.attach(never, 0);
    await within(
      (async () => {
        for (let i = 0; i < 300; i++) await second.append(KIB);
      })(),
      'appends complete despite a reader that never drains',
    );
    assert.equal(waits, 1, 'a stalled reader is waited for once');
  });

  it('refuses an append after the stream completed with a coded error', async () => {
    const g = gatedLog();
    const host: StreamHost = {
      sessionId: 's',
      epoch: 'E',
      fence: undefined,
      log: g.log,
      replayPageSize: 10,
      now: () => 0,
      onStreamComplete: () => {},
      onStoreFailure: () => {},
    };
    const stream = await OutboundStream.open(host, 'r1', { kind: 'request', requestIds: ['1'] });
    await stream.append('{"jsonrpc":"2.0","id":1,"result":{}}');
    stream.answered('1');
    await assert.rejects(stream.append('late'), (e: unknown) => isContinuityError(e) && e.code === 'stream-complete');
  });
});
