/**
 * The outbound stream's phase machine, tested against a table written out here by hand
 * (nothing below reads the implementation's table to decide what is expected), then the
 * phases as a real stream on a real memory store goes through them.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { STREAM_INPUTS, STREAM_PHASES, streamTransition, type StreamInput, type StreamPhase } from '../../src/server/stream/phase.js';
import { OutboundStream, type StreamHost } from '../../src/server/stream/outbound-stream.js';
import { memoryStore } from '../../src/store/memory/index.js';
import type { EventLog } from '../../src/store/types.js';
import { isContinuityError } from '../../src/protocol/errors.js';
import { waitFor } from '../helpers/wait.js';
import { defaultProcess } from '../../src/server/stream/process.js';

// `Record` types: a phase or input added to the machine and not here is a compile error.
const PHASES: Record<StreamPhase, true> = { open: true, completing: true, complete: true, broken: true, retired: true };
const INPUTS: Record<StreamInput, true> = { settle: true, finish: true, 'store-failed': true, retire: true };

/** Every legal transition; every pair not listed must be refused. */
const LEGAL: ReadonlyArray<readonly [StreamPhase, StreamInput, StreamPhase]> = [
  ['open', 'settle', 'completing'],
  ['open', 'store-failed', 'broken'],
  ['open', 'retire', 'retired'],
  ['completing', 'finish', 'complete'],
  ['completing', 'store-failed', 'broken'],
  ['completing', 'retire', 'retired'],
  ['complete', 'retire', 'retired'],
  ['broken', 'retire', 'retired'],
];

describe('stream phase table', () => {
  it('lists every phase and input', () => {
    assert.deepEqual([...STREAM_PHASES].sort(), Object.keys(PHASES).sort());
    assert.deepEqual([...STREAM_INPUTS].sort(), Object.keys(INPUTS).sort());
  });

  for (const [phase, input, next] of LEGAL) {
    it(`${phase} --${input}--> ${next}`, () => {
      assert.equal(streamTransition(phase, input), next);
    });
  }

  it('refuses every other (phase, input) pair', () => {
    let refused = 0;
    for (const phase of Object.keys(PHASES) as StreamPhase[]) {
      for (const input of Object.keys(INPUTS) as StreamInput[]) {
        if (LEGAL.some(([p, i]) => p === phase && i === input)) continue;
        assert.equal(streamTransition(phase, input), undefined, `${phase} --${input}--> must be refused`);
        refused++;
      }
    }
    assert.equal(refused, 20 - LEGAL.length);
  });

  it('has a terminal phase that nothing leaves, reachable from every other', () => {
    for (const input of Object.keys(INPUTS) as StreamInput[]) assert.equal(streamTransition('retired', input), undefined);
    for (const phase of Object.keys(PHASES) as StreamPhase[]) {
      if (phase !== 'retired') assert.equal(streamTransition(phase, 'retire'), 'retired');
    }
  });
});

/** A memory log whose next append fails when `fail` is set, and which counts closes. */
function faultyLog(): { log: EventLog; fail: boolean; closes: number } {
  const inner = memoryStore({ retention: { maxEvents: 1_000, maxBytes: 1 << 20 } }).log;
  const state = { fail: false, closes: 0 } as { log: EventLog; fail: boolean; closes: number };
  state.log = {
    ...inner,
    openStream: (...a) => inner.openStream(...a),
    read: (...a) => inner.read(...a),
    head: (...a) => inner.head(...a),
    streams: (...a) => inner.streams(...a),
    dropStream: (...a) => inner.dropStream(...a),
    dropSession: (...a) => inner.dropSession(...a),
    async append(...a) {
      if (state.fail) throw new Error('disk on fire');
      return inner.append(...a);
    },
    async closeStream(...a) {
      state.closes++;
      return inner.closeStream(...a);
    },
  };
  return state;
}

async function requestStream(log: EventLog, failures: unknown[] = [], completed: string[] = []): Promise<OutboundStream> {
  const host: StreamHost = {
    sessionId: 'sess',
    epoch: 'EPOCH0',
    fence: undefined,
    log,
    replayPageSize: 512,
    now: () => 1_000,
    onStreamComplete: (s) => completed.push(s.name),
    onStoreFailure: (error) => failures.push(error),
  };
  return OutboundStream.open(host, 'r1', { kind: 'request', requestIds: ['1'] });
}

async function rejection(p: Promise<void>): Promise<string> {
  try {
    await p;
  } catch (error) {
    return isContinuityError(error) ? error.code : String(error);
  }
  return 'accepted';
}

describe('stream phases on a real stream', () => {
  it('open → completing → complete once the last response is answered and stored', async () => {
    const f = faultyLog();
    const completed: string[] = [];
    const stream = await requestStream(f.log, [], completed);
    assert.equal(stream.phase, 'open');
    await stream.append('{"answer":1}', undefined, { durable: true });
    stream.answered('1');
    assert.equal(stream.phase, 'completing');
    assert.equal(await rejection(stream.append('late')), 'stream-complete', 'a completing stream takes no appends');
    await waitFor(() => stream.phase === 'complete', 'the stream to complete');
    assert.deepEqual(completed, ['r1']);
    assert.equal((await f.log.head('sess', 'r1'))?.closed, true);
  });

  it('open → broken when the store refuses a batch: appends fail with store-unavailable', async () => {
    const f = faultyLog();
    const failures: unknown[] = [];
    const stream = await requestStream(f.log, failures);
    f.fail = true;
    assert.equal(await rejection(stream.append('x', undefined, { durable: true })), 'store-unavailable');
    assert.equal(stream.phase, 'broken');
    assert.equal(failures.length, 1, 'the host hears of it once');
    assert.equal(await rejection(stream.append('y')), 'store-unavailable');
  });

  it('retired while completing: appends fail with replay-epoch-mismatch, and the dropped stream is not closed in the log', async () => {
    const f = faultyLog();
    const failures: unknown[] = [];
    const stream = await requestStream(f.log, failures);
    stream.answered('1');
    stream.retire();
    assert.equal(stream.phase, 'retired');
    assert.equal(await rejection(stream.append('x')), 'replay-epoch-mismatch');
    // The flush the settle queued runs first among the next turn's tasks; this one runs after it.
    await new Promise<void>((resolve) => defaultProcess.turns.atNextTurn(resolve));
    assert.equal(f.closes, 0);
    assert.deepEqual(failures, []);
  });
});
