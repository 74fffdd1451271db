/** Histories, checkpoints and table-driven cases shared by the verifier's test files. */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { chainSeed, formatEventId, nextChain } from '../../src/protocol/event-id.js';
import {
  createStreamVerifier,
  isDivergence,
  type EventVerdict,
  type StreamCheckpoint,
  type StreamVerifier,
  type StreamVerifierOptions,
  type Verdict,
} from '../../src/client/verifier.js';

// Shapes the server uses: a 16-char epoch (randomToken(12)) and base-36 stream names.
export const EPOCH = 'q3Zt9xKc0bYw_1-A';
export const OTHER_EPOCH = 'Zz9yXw8vUt7sRq6P';
export const STREAM = '1';

export interface Ev {
  id: string;
  data: string;
  seq: number;
  chain: string;
}

export function message(n: number, tag = ''): string {
  return JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 7, progress: n, message: tag } });
}

/** A stream's history as the server would number and chain it: a priming event, then messages. */
export function history(payloads: readonly string[], epoch = EPOCH, stream = STREAM): Ev[] {
  let chain = chainSeed(epoch, stream);
  return payloads.map((data, i) => {
    const seq = i + 1;
    chain = nextChain(chain, data);
    return { id: formatEventId({ epoch, stream, seq, chain }), data, seq, chain };
  });
}

export const PAYLOADS = ['', ...Array.from({ length: 11 }, (_, i) => message(i + 1))];
/** The true history. */
export const H = history(PAYLOADS);
/** Shares events 1..3 with H, then other content at the same positions (another replica's log). */
export const ALT = history([...PAYLOADS.slice(0, 3), ...PAYLOADS.slice(3).map((p) => `${p} `)]);
/** The same payloads on another stream and in another epoch. */
export const OTHER_STREAM = history(PAYLOADS, EPOCH, '2');
export const OTHER_GEN = history(PAYLOADS, OTHER_EPOCH, STREAM);

export function at(h: readonly Ev[], seq: number): Ev {
  const e = h[seq - 1];
  if (!e) throw new Error(`no event ${seq}`);
  return e;
}

/** The checkpoint of a client that fully processed events 1..seq of `h`. */
export function chainedCheckpoint(seq: number, h: readonly Ev[] = H): StreamCheckpoint {
  const e = at(h, seq);
  return { stream: STREAM, lastId: e.id, scheme: 'chained', seq, chain: e.chain };
}

export type Feed = [id: string | undefined, data: string];
export const ev = (e: Ev): Feed => [e.id, e.data];

/** An expected verdict: its kind, or a subset of its fields. */
export type Expect = Verdict['kind'] | (Partial<Record<string, unknown>> & { kind: Verdict['kind'] });

export interface Case {
  name: string;
  options: () => StreamVerifierOptions;
  /** Call `reconnected()` before feeding the event with this index. */
  reconnectAt?: number;
  feed: Feed[];
  expect: Expect[];
}

export function run(c: Case): { verifier: StreamVerifier; verdicts: EventVerdict[] } {
  const verifier = createStreamVerifier(c.options());
  const verdicts = c.feed.map(([id, data], i) => {
    if (c.reconnectAt === i) verifier.reconnected();
    return verifier.check(id, data);
  });
  return { verifier, verdicts };
}

export function assertVerdicts(actual: readonly EventVerdict[], expected: readonly Expect[]): void {
  assert.deepEqual(
    actual.map((v) => v.kind),
    expected.map((e) => (typeof e === 'string' ? e : e.kind)),
  );
  expected.forEach((e, i) => {
    if (typeof e === 'string') return;
    const v = actual[i] as unknown as Record<string, unknown>;
    for (const [key, value] of Object.entries(e)) assert.deepEqual(v[key], value, `verdict ${i}: ${key}`);
  });
}

export function table(cases: readonly Case[]): void {
  for (const c of cases) {
    it(c.name, () => {
      const { verifier, verdicts } = run(c);
      assertVerdicts(verdicts, c.expect);
      // Divergence is terminal: the verifier remembers the first one.
      const first = verdicts.find(isDivergence);
      assert.equal(verifier.diverged, first);
    });
  }
}

export const fromCheckpoint =
  (seq: number, extra: StreamVerifierOptions = {}) =>
  (): StreamVerifierOptions => ({
    checkpoint: chainedCheckpoint(seq),
    epoch: EPOCH,
    ...extra,
  });
export const fresh =
  (extra: StreamVerifierOptions = {}) =>
  (): StreamVerifierOptions => ({ epoch: EPOCH, ...extra });
