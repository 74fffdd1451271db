/** The client's verifier on integer and opaque IDs, checkpoint validation, its typed errors, and seeded fault runs. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  CONTINUOUS,
  DEFAULT_RECENT_ID_WINDOW,
  createStreamVerifier,
  idScheme,
  isDivergence,
  isStreamCheckpoint,
  type DivergenceVerdict,
  type StreamCheckpoint,
  type StreamVerifierOptions,
} from '../../src/client/verifier.js';
import { DIVERGENCE_CODES, DivergenceError, isDivergenceError, toDivergenceError } from '../../src/client/errors.js';
import { ContinuityError, ERRORS, JsonRpcCode } from '../../src/protocol/errors.js';
import { prng } from '../helpers/prng.js';
import { EPOCH, OTHER_EPOCH, STREAM, type Ev, message, history, H, ALT, at, chainedCheckpoint, type Feed, ev, table } from '../helpers/verifier-cases.js';

function processed(events: readonly Feed[], options: StreamVerifierOptions = {}): StreamCheckpoint {
  const v = createStreamVerifier({ stream: 'get', ...options });
  for (const [id, data] of events) assert.equal(v.check(id, data).kind, 'continuous');
  const cp = v.checkpoint();
  assert.ok(cp);
  return cp;
}

/** Options for a verifier resuming after `events` (plus `extra`), built anew per case. */
function resumedAfter(events: readonly Feed[]): (extra?: StreamVerifierOptions) => () => StreamVerifierOptions {
  return (extra = {}) =>
    (): StreamVerifierOptions => ({ checkpoint: processed(events), ...extra });
}

describe('verifier: integer IDs (seed 000 rules, foreign servers)', () => {
  const int = (n: number): Feed => [String(n), message(n)];
  const resumed = resumedAfter([int(1040), int(1041)]);
  table([
    { name: 'id == last+1 → continuous', options: resumed(), feed: [int(1042), int(1043)], expect: ['continuous', 'continuous'] },
    {
      name: 'id > last+1 → gap',
      options: resumed(),
      feed: [int(1049)],
      expect: [{ kind: 'gap', expectedSeq: 1042, actualSeq: 1049, stream: 'get' }],
    },
    { name: 'id < last → replay-reset', options: resumed(), feed: [int(1040)], expect: [{ kind: 'replay-reset', cause: 'behind', lastSeq: 1041 }] },
    {
      name: 'replay from zero (another replica) → replay-reset',
      options: resumed(),
      feed: [int(1)],
      expect: [{ kind: 'replay-reset', cause: 'behind', lastSeq: 1041, actualSeq: 1 }],
    },
    {
      name: 'id == last with the same data (digest) → boundary-replay, then continuous',
      options: resumed(),
      feed: [int(1041), int(1042)],
      expect: [{ kind: 'boundary-replay', id: '1041' }, 'continuous'],
    },
    {
      name: 'id == last with other data → replay-reset (content-differs)',
      options: resumed(),
      feed: [['1041', message(5000)]],
      expect: [{ kind: 'replay-reset', cause: 'content-differs', lastSeq: 1041, actualSeq: 1041 }],
    },
    {
      name: 'later: a gap, after continuous events',
      options: resumed(),
      feed: [int(1042), int(1043), int(1045)],
      expect: ['continuous', 'continuous', { kind: 'gap', expectedSeq: 1044, actualSeq: 1045 }],
    },
    {
      name: 'later: an exact duplicate is dropped, an older ID is a replay-reset',
      options: resumed(),
      feed: [int(1042), int(1042), int(1043), int(1042)],
      expect: ['continuous', 'duplicate', 'continuous', { kind: 'replay-reset', cause: 'behind' }],
    },
    {
      name: 'later: an opaque ID → foreign-stream (scheme)',
      options: resumed(),
      feed: [int(1042), ['abc_1', message(0)]],
      expect: ['continuous', { kind: 'foreign-stream', part: 'scheme', expected: 'integer', actual: 'opaque' }],
    },
    {
      name: 'later: an event without an ID → undetectable (missing-id)',
      options: resumed(),
      feed: [int(1042), [undefined, message(0)]],
      expect: ['continuous', { kind: 'undetectable', cause: 'missing-id' }],
    },
    {
      name: 'a new integer stream starts wherever the counter is, then must be contiguous',
      options: () => ({ stream: 'get' }),
      feed: [int(77), int(78), int(80)],
      expect: ['continuous', 'continuous', { kind: 'gap', expectedSeq: 79 }],
    },
    {
      name: 'a checkpoint without a digest cannot vouch for a boundary → replay-reset',
      options: () => ({ checkpoint: { stream: 'get', lastId: '1041', scheme: 'integer' } }),
      feed: [int(1041)],
      expect: [{ kind: 'replay-reset', cause: 'content-differs' }],
    },
    {
      name: "integerIds: 'opaque' — timestamps are not taken for a counter",
      options: () => ({ integerIds: 'opaque' }),
      feed: [
        ['1731500000123', 'a'],
        ['1731500000999', 'b'],
      ],
      expect: ['continuous', 'continuous'],
    },
  ]);

  it('the checkpoint keeps the value and a digest of the last event', () => {
    const cp = processed([int(1040), int(1041)]);
    assert.equal(cp.scheme, 'integer');
    assert.equal(cp.seq, 1041);
    assert.equal(cp.lastId, '1041');
    assert.match(cp.digest ?? '', /^[A-Za-z0-9_-]{16}$/);
    assert.ok(isStreamCheckpoint(cp));
  });
});

describe('verifier: opaque IDs', () => {
  const op = (n: number): Feed => [`get_${1_700_000_000_000 + n}_${(n * 7919).toString(36)}`, message(n)];
  const resumed = resumedAfter([op(1), op(2)]);
  table([
    {
      name: 'a new opaque stream is delivered; an exact repeat is dropped',
      options: () => ({}),
      feed: [op(1), op(2), op(1), op(3)],
      expect: ['continuous', 'continuous', { kind: 'duplicate', id: op(1)[0] }, 'continuous'],
    },
    {
      name: 'default posture: the first event after a resume → undetectable, and it stays so',
      options: resumed(),
      feed: [op(3), op(4)],
      expect: [
        { kind: 'undetectable', cause: 'opaque-id', id: op(3)[0], stream: 'get' },
        { kind: 'undetectable', cause: 'opaque-id', id: op(3)[0] },
      ],
    },
    {
      name: 'default posture: even a replay of the boundary event proves nothing → undetectable',
      options: resumed(),
      feed: [op(2)],
      expect: [{ kind: 'undetectable', cause: 'opaque-id' }],
    },
    {
      name: 'default posture: an event without an ID after a resume → undetectable (missing-id)',
      options: resumed(),
      feed: [[undefined, message(3)]],
      expect: [{ kind: 'undetectable', cause: 'missing-id' }],
    },
    {
      name: 'trustOpaqueIds: the boundary event is dropped, new IDs delivered, later repeats dropped',
      options: resumed({ trustOpaqueIds: true }),
      feed: [op(2), op(3), op(4), op(3)],
      expect: ['boundary-replay', 'continuous', 'continuous', { kind: 'duplicate', id: op(3)[0] }],
    },
    {
      name: 'trustOpaqueIds: an event without an ID after a resume is delivered',
      options: resumed({ trustOpaqueIds: true }),
      feed: [[undefined, message(3)], op(3)],
      expect: ['continuous', 'continuous'],
    },
    {
      name: 'trustOpaqueIds: the window survives reconnected() within the verifier',
      options: () => ({ trustOpaqueIds: true }),
      reconnectAt: 3,
      feed: [op(1), op(2), op(3), op(3), op(1), op(2), op(4)],
      expect: ['continuous', 'continuous', 'continuous', 'boundary-replay', 'duplicate', 'duplicate', 'continuous'],
    },
    {
      name: 'without trust, a reconnect on a live opaque stream → undetectable',
      options: () => ({}),
      reconnectAt: 2,
      feed: [op(1), op(2), op(3)],
      expect: ['continuous', 'continuous', { kind: 'undetectable', cause: 'opaque-id' }],
    },
    {
      name: 'opaque absorbs IDs that look like other schemes',
      options: () => ({}),
      feed: [op(1), ['42', 'x'], ev(at(H, 1))],
      expect: ['continuous', 'continuous', 'continuous'],
    },
    {
      name: 'a stream that never had IDs is delivered, and reconnected() is a no-op',
      options: () => ({}),
      reconnectAt: 2,
      feed: [
        [undefined, 'a'],
        ['', 'b'],
        [undefined, 'c'],
      ],
      expect: ['continuous', 'continuous', 'continuous'],
    },
  ]);

  it('the recent-ID window is bounded (custom size)', () => {
    const v = createStreamVerifier({ trustOpaqueIds: true, recentIdWindow: 4 });
    for (let n = 1; n <= 6; n++) assert.equal(v.check(...op(n)).kind, 'continuous');
    // 1 and 2 were evicted; 3..6 are remembered.
    assert.equal(v.check(...op(1)).kind, 'continuous');
    assert.equal(v.check(...op(4)).kind, 'duplicate');
    assert.equal(v.check(...op(6)).kind, 'duplicate');
    // Adding 1 again evicted 3.
    assert.equal(v.check(...op(3)).kind, 'continuous');
  });

  it(`the recent-ID window is bounded by default (${DEFAULT_RECENT_ID_WINDOW})`, () => {
    const v = createStreamVerifier({ trustOpaqueIds: true });
    for (let n = 0; n <= DEFAULT_RECENT_ID_WINDOW; n++) assert.equal(v.check(...op(n)).kind, 'continuous');
    assert.equal(v.check(...op(0)).kind, 'continuous', 'the oldest ID was evicted');
    assert.equal(v.check(...op(2)).kind, 'duplicate', 'recent IDs are still remembered');
  });

  it('rejects a window that is not a positive integer', () => {
    assert.throws(() => createStreamVerifier({ recentIdWindow: 0 }), TypeError);
    assert.throws(() => createStreamVerifier({ recentIdWindow: 1.5 }), TypeError);
  });
});

describe('verifier: idScheme and checkpoint validation', () => {
  it('classifies IDs by shape', () => {
    assert.equal(idScheme(at(H, 1).id), 'chained');
    assert.equal(idScheme('1041'), 'integer');
    assert.equal(idScheme('0'), 'integer');
    assert.equal(idScheme('1234567890123456'), 'opaque', 'longer than 15 digits');
    assert.equal(idScheme('get_1700000000000_abc'), 'opaque');
    assert.equal(idScheme('a.b.c'), 'opaque');
  });

  const bad: Array<[string, unknown]> = [
    ['null', null],
    ['array', []],
    ['no stream', { lastId: '1', scheme: 'integer' }],
    ['empty lastId', { stream: 's', lastId: '', scheme: 'opaque' }],
    ['huge lastId', { stream: 's', lastId: 'x'.repeat(2000), scheme: 'opaque' }],
    ['unknown scheme', { stream: 's', lastId: '1', scheme: 'numeric' }],
    ['chained lastId that does not parse', { stream: STREAM, lastId: 'not-an-id', scheme: 'chained' }],
    ['chained stream differs from the ID', { ...chainedCheckpoint(3), stream: '9' }],
    ['chained seq differs from the ID', { ...chainedCheckpoint(3), seq: 4 }],
    ['chained chain differs from the ID', { ...chainedCheckpoint(3), chain: at(H, 4).chain }],
    ['integer lastId not decimal', { stream: 's', lastId: '12a', scheme: 'integer' }],
    ['integer seq differs', { stream: 's', lastId: '12', scheme: 'integer', seq: 13 }],
    ['integer digest malformed', { stream: 's', lastId: '12', scheme: 'integer', digest: 'short' }],
    ['updatedAt not finite', { stream: 's', lastId: 'x', scheme: 'opaque', updatedAt: Number.NaN }],
    ['complete not boolean', { stream: 's', lastId: 'x', scheme: 'opaque', complete: 'yes' }],
  ];
  for (const [name, value] of bad) {
    it(`rejects a stream checkpoint: ${name}`, () => {
      assert.equal(isStreamCheckpoint(value), false);
      assert.throws(() => createStreamVerifier({ checkpoint: value as StreamCheckpoint }), TypeError);
    });
  }

  it('accepts well-formed checkpoints of each scheme', () => {
    assert.ok(isStreamCheckpoint(chainedCheckpoint(3)));
    assert.ok(isStreamCheckpoint({ stream: STREAM, lastId: at(H, 3).id, scheme: 'chained' }));
    assert.ok(isStreamCheckpoint({ stream: 's', lastId: '12', scheme: 'integer', seq: 12, updatedAt: 1, complete: false }));
    assert.ok(isStreamCheckpoint({ stream: 's', lastId: 'anything at all', scheme: 'opaque' }));
  });
});

describe('verifier: divergence errors', () => {
  const e6 = at(H, 6);
  const samples: DivergenceVerdict[] = [
    { kind: 'session-invalid', cause: 'status', status: 404, expected: 'sess-A-0123456789', actual: null, serverReason: 'session-not-found' },
    { kind: 'session-invalid', cause: 'session-changed', status: 200, expected: 'sess-A-0123456789', actual: 'sess-B-0123456789' },
    { kind: 'session-invalid', cause: 'session-missing', status: 200, expected: 'sess-A-0123456789', actual: null },
    { kind: 'epoch-changed', expected: EPOCH, actual: OTHER_EPOCH },
    { kind: 'gap', stream: STREAM, id: e6.id, expectedSeq: 6, actualSeq: 9 },
    { kind: 'replay-reset', stream: STREAM, id: e6.id, cause: 'behind', lastSeq: 7, actualSeq: 6 },
    { kind: 'replay-reset', stream: STREAM, id: e6.id, cause: 'content-differs', lastSeq: 6, actualSeq: 6 },
    { kind: 'chain-mismatch', stream: STREAM, id: e6.id, seq: 6, expectedChain: e6.chain, actualChain: at(ALT, 6).chain },
    { kind: 'foreign-stream', stream: STREAM, id: e6.id, part: 'epoch', expected: EPOCH, actual: OTHER_EPOCH },
    { kind: 'undetectable', stream: 'get', id: 'x', cause: 'opaque-id' },
    { kind: 'undetectable', stream: 'get', id: null, cause: 'missing-id' },
  ];

  it('every divergence kind has a table entry, and every entry is reachable', () => {
    assert.deepEqual(new Set(samples.map((s) => s.kind)), new Set(DIVERGENCE_CODES));
    for (const code of DIVERGENCE_CODES) assert.ok(code in ERRORS, `${code} is in the shared error table`);
  });

  for (const verdict of samples) {
    it(`${verdict.kind}${'cause' in verdict ? ` (${verdict.cause})` : ''}: toDivergenceError`, () => {
      assert.equal(isDivergence(verdict), true);
      const err = toDivergenceError(verdict);
      const spec = ERRORS[verdict.kind];
      assert.ok(err instanceof Error);
      assert.ok(err instanceof DivergenceError);
      assert.ok(err instanceof ContinuityError, 'a divergence is a ContinuityError of the shared table');
      assert.equal(err.name, 'DivergenceError');
      assert.equal(err.code, verdict.kind);
      assert.equal(err.verdict, verdict);
      assert.equal(err.status, spec.status);
      assert.equal(err.rpcCode, spec.rpc);
      assert.equal(err.retryable, false);
      assert.ok(err.message.length > 0);
      assert.equal(isDivergenceError(err), true);
      assert.equal(isDivergenceError(err, verdict.kind), true);
      assert.equal(isDivergenceError(err, verdict.kind === 'gap' ? 'replay-reset' : 'gap'), false);
      // Session IDs are bearer-like: messages carry a prefix at most.
      assert.doesNotMatch(err.message, /0123456789/);
      const rpc = err.toJsonRpcError();
      assert.equal(rpc.code, spec.rpc);
      assert.equal(rpc.data.reason, verdict.kind);
      assert.deepEqual(JSON.parse(JSON.stringify(rpc)), rpc);
    });
  }

  it('session-invalid fails requests as session-not-found; the rest as continuity-refused', () => {
    assert.equal(ERRORS['session-invalid'].rpc, JsonRpcCode.SessionNotFound);
    assert.equal(ERRORS.gap.rpc, JsonRpcCode.ContinuityRefused);
  });

  it('messages name the case', () => {
    assert.match(toDivergenceError({ kind: 'gap', stream: '1', id: 'x', expectedSeq: 6, actualSeq: 9 }).message, /expected seq 6, got 9; 3 event\(s\) lost/);
    assert.match(toDivergenceError({ kind: 'epoch-changed', expected: 'a', actual: null }).message, /expected "a", got none/);
  });

  it('isDivergenceError narrows the verdict', () => {
    const err: unknown = toDivergenceError({ kind: 'gap', stream: '1', id: 'x', expectedSeq: 6, actualSeq: 9 });
    if (!isDivergenceError(err, 'gap')) throw new Error('expected a gap');
    assert.equal(err.verdict.actualSeq - err.verdict.expectedSeq, 3);
  });

  it('non-divergence verdicts are not errors', () => {
    for (const v of [CONTINUOUS, { kind: 'boundary-replay', id: 'x' }, { kind: 'duplicate', id: 'x' }] as const) {
      assert.equal(isDivergence(v), false);
      assert.throws(() => toDivergenceError(v as unknown as DivergenceVerdict), TypeError);
    }
  });

  it('matches by brand across module copies', () => {
    class Foreign extends Error {}
    Object.defineProperty(Foreign.prototype, Symbol.for('mcp-continuity.divergence'), { value: true });
    assert.ok(new Foreign() instanceof DivergenceError);
    assert.equal(new Error('x') instanceof DivergenceError, false);
  });
});

describe('verifier: seeded fault runs (lost, duplicated, reordered, unexpected must all be 0)', () => {
  it('over 2,000 resumes against faulty servers, only the true continuation is ever delivered', () => {
    const rand = prng(0x5eed000);
    const pick = (n: number): number => Math.floor(rand() * n);
    const N = 40;
    const truth = history(['', ...Array.from({ length: N - 1 }, (_, i) => message(i + 1))]);
    const faults = ['honest', 'boundary', 'skip', 'rewind', 'alt', 'tamper', 'foreign', 'shuffle'] as const;
    const seen = new Map<string, number>();
    for (let run = 0; run < 2000; run++) {
      const fault = faults[pick(faults.length)] ?? 'honest';
      seen.set(fault, (seen.get(fault) ?? 0) + 1);
      const k = 2 + pick(N - 4); // the client processed 1..k
      // Another replica agrees with the truth up to `fork` < k. (Agreeing through k would make
      // its continuation a legitimate one: the client cannot and need not tell them apart.)
      const fork = 1 + pick(k - 1);
      const alt = history([...truth.slice(0, fork).map((e) => e.data), ...truth.slice(fork).map((e) => `${e.data}#${run}`)]);
      let sent: Ev[];
      switch (fault) {
        case 'honest':
          sent = truth.slice(k);
          break;
        case 'boundary':
          sent = truth.slice(k - 1);
          break;
        case 'skip':
          sent = truth.slice(k + 1 + pick(3));
          break;
        case 'rewind':
          sent = truth.slice(pick(k - 1));
          break;
        case 'alt':
          sent = alt.slice(k - pick(2));
          break;
        case 'tamper':
          sent = truth.slice(k).map((e, i) => (i === pick(3) ? { ...e, data: `${e.data} ` } : e));
          break;
        case 'foreign':
          sent = history(
            truth.map((e) => e.data),
            OTHER_EPOCH,
          ).slice(k);
          break;
        case 'shuffle':
          sent = truth.slice(k).sort(() => rand() - 0.5);
          break;
      }
      // Any suffix may also be cut short, as a dropped connection would.
      sent = sent.slice(0, 1 + pick(Math.max(1, sent.length)));

      const v = createStreamVerifier({ checkpoint: { stream: STREAM, lastId: at(truth, k).id, scheme: 'chained' }, epoch: EPOCH });
      const delivered: Ev[] = [];
      let dropped = 0;
      for (const e of sent) {
        const verdict = v.check(e.id, e.data);
        if (verdict.kind === 'continuous') delivered.push(e);
        else if (!isDivergence(verdict)) dropped++;
        else break;
      }
      // Whatever was delivered is exactly the truth right after k: nothing lost, duplicated,
      // reordered or unexpected.
      assert.deepEqual(
        delivered.map((e) => [e.seq, e.data]),
        truth.slice(k, k + delivered.length).map((e) => [e.seq, e.data]),
        `run ${run} (${fault}, k=${k})`,
      );
      // An honest server is never refused; a dropped event is only ever the boundary.
      if (fault === 'honest' || fault === 'boundary') assert.equal(delivered.length + dropped, sent.length, `run ${run} (${fault})`);
      assert.ok(dropped <= 1, `run ${run}: at most the boundary event is dropped`);
    }
    assert.equal(seen.size, faults.length);
  });
});
