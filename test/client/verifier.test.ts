/** The client's verifier on chained IDs: reconnect checks, the first event after a resume, later events, new streams. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chainSeed, formatEventId, nextChain } from '../../src/protocol/event-id.js';
import { CONTINUOUS, createStreamVerifier, isStreamCheckpoint, verifyReconnect, type ReconnectInfo, type Verdict } from '../../src/client/verifier.js';
import {
  EPOCH,
  OTHER_EPOCH,
  STREAM,
  type Ev,
  message,
  history,
  H,
  ALT,
  OTHER_STREAM,
  OTHER_GEN,
  at,
  chainedCheckpoint,
  ev,
  table,
  fromCheckpoint,
  fresh,
} from '../helpers/verifier-cases.js';

describe('verifier: verifyReconnect (seed 000 steps 1–2)', () => {
  const checkpoint = { sessionId: 'sess-A', epoch: EPOCH };
  const ok: ReconnectInfo = { status: 200, sessionId: 'sess-A', epoch: EPOCH };
  const cases: Array<{ name: string; info: ReconnectInfo; expected: { sessionId: string; epoch: string | null }; requireEcho?: boolean; verdict: Verdict }> = [
    { name: '200, same session, same epoch → continuous', info: ok, expected: checkpoint, verdict: CONTINUOUS },
    { name: '2xx bounds: 299 passes', info: { ...ok, status: 299 }, expected: checkpoint, verdict: CONTINUOUS },
    {
      name: '404 → session-invalid (status)',
      info: { status: 404, sessionId: null, epoch: null, reason: 'session-not-found' },
      expected: checkpoint,
      verdict: { kind: 'session-invalid', cause: 'status', status: 404, expected: 'sess-A', actual: null, serverReason: 'session-not-found' },
    },
    {
      name: '409 replay-epoch-mismatch refusal → session-invalid (status), reason kept',
      info: { status: 409, sessionId: 'sess-A', epoch: OTHER_EPOCH, reason: 'replay-epoch-mismatch' },
      expected: checkpoint,
      verdict: { kind: 'session-invalid', cause: 'status', status: 409, expected: 'sess-A', actual: 'sess-A', serverReason: 'replay-epoch-mismatch' },
    },
    {
      name: '500 without a parsed reason → session-invalid (status)',
      info: { status: 500, sessionId: null, epoch: null },
      expected: checkpoint,
      verdict: { kind: 'session-invalid', cause: 'status', status: 500, expected: 'sess-A', actual: null },
    },
    {
      name: '300 and 199 are not 2xx',
      info: { ...ok, status: 300 },
      expected: checkpoint,
      verdict: { kind: 'session-invalid', cause: 'status', status: 300, expected: 'sess-A', actual: 'sess-A' },
    },
    {
      name: 'status is judged before the echo',
      info: { status: 404, sessionId: 'sess-B', epoch: EPOCH },
      expected: checkpoint,
      verdict: { kind: 'session-invalid', cause: 'status', status: 404, expected: 'sess-A', actual: 'sess-B' },
    },
    {
      name: '200 with another Mcp-Session-Id (session resurrection) → session-invalid (session-changed)',
      info: { ...ok, sessionId: 'sess-B' },
      expected: checkpoint,
      verdict: { kind: 'session-invalid', cause: 'session-changed', status: 200, expected: 'sess-A', actual: 'sess-B' },
    },
    { name: '200 without an echo passes by default', info: { ...ok, sessionId: null }, expected: checkpoint, verdict: CONTINUOUS },
    {
      name: '200 without an echo, requireSessionEcho → session-invalid (session-missing)',
      info: { ...ok, sessionId: null },
      expected: checkpoint,
      requireEcho: true,
      verdict: { kind: 'session-invalid', cause: 'session-missing', status: 200, expected: 'sess-A', actual: null },
    },
    {
      name: 'epoch differs → epoch-changed',
      info: { ...ok, epoch: OTHER_EPOCH },
      expected: checkpoint,
      verdict: { kind: 'epoch-changed', expected: EPOCH, actual: OTHER_EPOCH },
    },
    {
      name: 'server stopped sending an epoch → epoch-changed',
      info: { ...ok, epoch: null },
      expected: checkpoint,
      verdict: { kind: 'epoch-changed', expected: EPOCH, actual: null },
    },
    {
      name: 'server started sending an epoch → epoch-changed',
      info: ok,
      expected: { sessionId: 'sess-A', epoch: null },
      verdict: { kind: 'epoch-changed', expected: null, actual: EPOCH },
    },
    {
      name: 'no epoch on either side passes (the event IDs decide)',
      info: { ...ok, epoch: null },
      expected: { sessionId: 'sess-A', epoch: null },
      verdict: CONTINUOUS,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.deepEqual(verifyReconnect(c.expected, c.info, { requireSessionEcho: c.requireEcho === true }), c.verdict);
    });
  }

  it('199 is not 2xx either', () => {
    assert.equal(verifyReconnect(checkpoint, { ...ok, status: 199 }).kind, 'session-invalid');
  });
});

describe('verifier: chained IDs, first event after a resume (seed 000 steps 3–5)', () => {
  table([
    { name: 'seq == last+1, chain verifies → continuous', options: fromCheckpoint(5), feed: [ev(at(H, 6))], expect: ['continuous'] },
    {
      name: 'seq > last+1 → gap',
      options: fromCheckpoint(5),
      feed: [ev(at(H, 9))],
      expect: [{ kind: 'gap', stream: STREAM, expectedSeq: 6, actualSeq: 9, id: at(H, 9).id }],
    },
    {
      name: 'seq < last → replay-reset (behind)',
      options: fromCheckpoint(5),
      feed: [ev(at(H, 3))],
      expect: [{ kind: 'replay-reset', cause: 'behind', lastSeq: 5, actualSeq: 3 }],
    },
    {
      name: 'replay from zero: seq 1 again → replay-reset (behind)',
      options: fromCheckpoint(5),
      feed: [ev(at(H, 1))],
      expect: [{ kind: 'replay-reset', cause: 'behind', lastSeq: 5, actualSeq: 1 }],
    },
    {
      name: 'seq == last, same chain → boundary-replay (dropped), then continuous',
      options: fromCheckpoint(5),
      feed: [ev(at(H, 5)), ev(at(H, 6)), ev(at(H, 7))],
      expect: [{ kind: 'boundary-replay', id: at(H, 5).id }, 'continuous', 'continuous'],
    },
    {
      name: 'seq == last, other chain (equal seq, other history) → replay-reset (content-differs)',
      options: fromCheckpoint(5),
      feed: [ev(at(ALT, 5))],
      expect: [{ kind: 'replay-reset', cause: 'content-differs', lastSeq: 5, actualSeq: 5 }],
    },
    {
      name: 'seq == last+1 with the chain of another history → chain-mismatch',
      options: fromCheckpoint(5),
      feed: [ev(at(ALT, 6))],
      expect: [{ kind: 'chain-mismatch', seq: 6, expectedChain: nextChain(at(H, 5).chain, at(ALT, 6).data), actualChain: at(ALT, 6).chain }],
    },
    {
      name: 'seq == last+1, right ID but the data was altered → chain-mismatch',
      options: fromCheckpoint(5),
      feed: [[at(H, 6).id, message(999)]],
      expect: [{ kind: 'chain-mismatch', seq: 6, actualChain: at(H, 6).chain }],
    },
    {
      name: 'an ID of another epoch → foreign-stream (epoch)',
      options: fromCheckpoint(5),
      feed: [ev(at(OTHER_GEN, 6))],
      expect: [{ kind: 'foreign-stream', part: 'epoch', expected: EPOCH, actual: OTHER_EPOCH }],
    },
    {
      name: 'an ID of another stream → foreign-stream (stream)',
      options: fromCheckpoint(5),
      feed: [ev(at(OTHER_STREAM, 6))],
      expect: [{ kind: 'foreign-stream', part: 'stream', expected: STREAM, actual: '2' }],
    },
    {
      name: 'an integer ID on a chained stream → foreign-stream (scheme)',
      options: fromCheckpoint(5),
      feed: [['6', at(H, 6).data]],
      expect: [{ kind: 'foreign-stream', part: 'scheme', expected: 'chained', actual: 'integer' }],
    },
    {
      name: 'an event without an ID → undetectable (missing-id)',
      options: fromCheckpoint(5),
      feed: [[undefined, at(H, 6).data]],
      expect: [{ kind: 'undetectable', cause: 'missing-id', id: null }],
    },
    {
      name: 'trustOpaqueIds does not excuse a missing ID on a chained stream',
      options: fromCheckpoint(5, { trustOpaqueIds: true }),
      feed: [['', at(H, 6).data]],
      expect: [{ kind: 'undetectable', cause: 'missing-id' }],
    },
    {
      name: 'the checkpoint epoch wins over a stale session epoch option',
      options: () => ({ checkpoint: chainedCheckpoint(5), epoch: OTHER_EPOCH }),
      feed: [ev(at(H, 6))],
      expect: ['continuous'],
    },
  ]);
});

describe('verifier: chained IDs, every later event (provisionally continuous, keep validating)', () => {
  table([
    {
      name: 'a run of valid events stays continuous',
      options: fromCheckpoint(5),
      feed: H.slice(5).map(ev),
      expect: H.slice(5).map(() => 'continuous' as const),
    },
    {
      name: 'a later gap',
      options: fromCheckpoint(5),
      feed: [ev(at(H, 6)), ev(at(H, 7)), ev(at(H, 9))],
      expect: ['continuous', 'continuous', { kind: 'gap', expectedSeq: 8, actualSeq: 9 }],
    },
    {
      name: 'a later chain break (altered data)',
      options: fromCheckpoint(5),
      feed: [ev(at(H, 6)), ev(at(H, 7)), [at(H, 8).id, message(8, 'tampered')]],
      expect: ['continuous', 'continuous', { kind: 'chain-mismatch', seq: 8 }],
    },
    {
      name: 'a later switch to another history at the next seq',
      options: fromCheckpoint(3),
      feed: [ev(at(H, 4)), ev(at(ALT, 5))],
      expect: ['continuous', { kind: 'chain-mismatch', seq: 5 }],
    },
    {
      name: 'a later exact duplicate of the last event → duplicate (dropped), then continuous',
      options: fromCheckpoint(5),
      feed: [ev(at(H, 6)), ev(at(H, 6)), ev(at(H, 7))],
      expect: ['continuous', { kind: 'duplicate', id: at(H, 6).id }, 'continuous'],
    },
    {
      name: 'a later repeat of an older event → replay-reset (no ID-only dedupe)',
      options: fromCheckpoint(5),
      feed: [ev(at(H, 6)), ev(at(H, 7)), ev(at(H, 6))],
      expect: ['continuous', 'continuous', { kind: 'replay-reset', cause: 'behind', lastSeq: 7, actualSeq: 6 }],
    },
    {
      name: 'a later foreign event',
      options: fromCheckpoint(5),
      feed: [ev(at(H, 6)), ev(at(OTHER_STREAM, 7))],
      expect: ['continuous', { kind: 'foreign-stream', part: 'stream' }],
    },
    {
      name: 'a later event without an ID',
      options: fromCheckpoint(5),
      feed: [ev(at(H, 6)), [undefined, at(H, 7).data]],
      expect: ['continuous', { kind: 'undetectable', cause: 'missing-id' }],
    },
    {
      name: 'divergence is terminal: even the right next event gets the same verdict',
      options: fromCheckpoint(5),
      feed: [ev(at(H, 8)), ev(at(H, 6)), ev(at(H, 7))],
      expect: [
        { kind: 'gap', actualSeq: 8 },
        { kind: 'gap', actualSeq: 8 },
        { kind: 'gap', actualSeq: 8 },
      ],
    },
    {
      name: 'a reconnect mid-stream: the boundary replay is dropped again, then continuous',
      options: fromCheckpoint(5),
      reconnectAt: 2,
      feed: [ev(at(H, 6)), ev(at(H, 7)), ev(at(H, 7)), ev(at(H, 8))],
      expect: ['continuous', 'continuous', 'boundary-replay', 'continuous'],
    },
    {
      name: 'a reconnect mid-stream that skips events → gap',
      options: fromCheckpoint(5),
      reconnectAt: 1,
      feed: [ev(at(H, 6)), ev(at(H, 10))],
      expect: ['continuous', { kind: 'gap', expectedSeq: 7, actualSeq: 10 }],
    },
  ]);

  it('checkpoint() follows the last continuous event only', () => {
    const v = createStreamVerifier({ checkpoint: chainedCheckpoint(5), epoch: EPOCH });
    assert.deepEqual(v.checkpoint(), chainedCheckpoint(5));
    assert.equal(v.check(...ev(at(H, 5))).kind, 'boundary-replay');
    assert.deepEqual(v.checkpoint(), chainedCheckpoint(5));
    assert.equal(v.check(...ev(at(H, 6))), CONTINUOUS);
    assert.deepEqual(v.checkpoint(), chainedCheckpoint(6));
    assert.equal(v.check(...ev(at(H, 8))).kind, 'gap');
    assert.deepEqual(v.checkpoint(), chainedCheckpoint(6));
  });
});

describe('verifier: chained IDs, a new stream', () => {
  const NEW = history(['', message(1), message(2)], EPOCH, 'a');
  const atNew = (seq: number): Ev => at(NEW, seq);
  table([
    {
      name: 'first event seq 1 chained from chainSeed(epoch, stream) → continuous; the stream name is learned',
      options: fresh(),
      feed: NEW.map(ev),
      expect: ['continuous', 'continuous', 'continuous'],
    },
    { name: 'first event seq 2 → gap (expected 1)', options: fresh(), feed: [ev(atNew(2))], expect: [{ kind: 'gap', expectedSeq: 1, actualSeq: 2 }] },
    {
      name: 'first event seq 1 chained from a wrong seed → chain-mismatch',
      options: fresh(),
      feed: [[formatEventId({ epoch: EPOCH, stream: 'a', seq: 1, chain: nextChain('AAAAAAAAAAAAAAAA', '') }), '']],
      expect: [{ kind: 'chain-mismatch', seq: 1, expectedChain: nextChain(chainSeed(EPOCH, 'a'), '') }],
    },
    {
      name: 'first event seq 1 chained from the seed of another stream → chain-mismatch',
      options: fresh(),
      feed: [[formatEventId({ epoch: EPOCH, stream: 'a', seq: 1, chain: at(OTHER_STREAM, 1).chain }), '']],
      expect: [{ kind: 'chain-mismatch', seq: 1 }],
    },
    {
      name: 'first event of another epoch than the session → foreign-stream (epoch)',
      options: fresh(),
      feed: [ev(at(OTHER_GEN, 1))],
      expect: [{ kind: 'foreign-stream', part: 'epoch', expected: EPOCH, actual: OTHER_EPOCH }],
    },
    {
      name: 'first event of another stream than expected → foreign-stream (stream)',
      options: fresh({ stream: 'b' }),
      feed: [ev(atNew(1))],
      expect: [{ kind: 'foreign-stream', part: 'stream', expected: 'b', actual: 'a' }],
    },
    {
      name: 'no session epoch: the first event names it, later ones must keep it',
      options: () => ({}),
      feed: [ev(at(OTHER_GEN, 1)), ev(at(H, 2))],
      expect: ['continuous', { kind: 'foreign-stream', part: 'epoch', expected: OTHER_EPOCH, actual: EPOCH }],
    },
    {
      name: 'once learned, the stream name is enforced',
      options: fresh(),
      feed: [ev(atNew(1)), ev(at(H, 2))],
      expect: ['continuous', { kind: 'foreign-stream', part: 'stream', expected: 'a', actual: STREAM }],
    },
    {
      name: 'reconnected() before any ID is a no-op: seq 1 is still required and accepted',
      options: fresh(),
      reconnectAt: 0,
      feed: [ev(atNew(1)), ev(atNew(2))],
      expect: ['continuous', 'continuous'],
    },
    {
      name: 'a GET without a cursor that starts past seq 1 → gap',
      options: fresh(),
      reconnectAt: 0,
      feed: [ev(atNew(3))],
      expect: [{ kind: 'gap', expectedSeq: 1, actualSeq: 3 }],
    },
    {
      name: 'a later duplicate and a later repeat of the first event',
      options: fresh(),
      feed: [ev(atNew(1)), ev(atNew(2)), ev(atNew(2)), ev(atNew(1))],
      expect: ['continuous', 'continuous', 'duplicate', { kind: 'replay-reset', cause: 'behind', lastSeq: 2, actualSeq: 1 }],
    },
  ]);

  it('checkpoint() is undefined before the first event, then names the learned stream', () => {
    const v = createStreamVerifier({ epoch: EPOCH });
    assert.equal(v.checkpoint(), undefined);
    v.check(...ev(atNew(1)));
    const cp = v.checkpoint();
    assert.deepEqual(cp, { stream: 'a', lastId: atNew(1).id, scheme: 'chained', seq: 1, chain: atNew(1).chain });
    assert.ok(isStreamCheckpoint(cp));
    // A verifier resumed from it continues where this one stopped.
    const resumed = createStreamVerifier({ checkpoint: cp, epoch: EPOCH });
    assert.equal(resumed.check(...ev(atNew(2))).kind, 'continuous');
  });
});

/** A checkpoint made the way a client makes one: by a verifier that processed these events. */
