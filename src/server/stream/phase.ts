/**
 * The life of one outbound stream, as a pure state machine (the way `../upgrade/state.ts`
 * spells out the upgrade):
 *
 *   open ──settle──▶ completing ──finish──▶ complete
 *     │                  │                      │
 *   store-failed     store-failed               │
 *     ▼                  ▼                      │
 *   broken ◀─────────────┘                      │
 *     │                                         │
 *   retire (from open, completing, complete and broken) ──▶ retired (terminal)
 *
 * `settle`: the stream owes no response any more; what is queued is written, then it
 * closes. `finish`: the queue is empty and the close is going to the log. `store-failed`:
 * the log refused a batch even after retries, so numbering cannot go on without a gap.
 * `retire`: a log reset dropped the stream; its remaining writes no longer matter.
 */

export type StreamPhase = 'open' | 'completing' | 'complete' | 'broken' | 'retired';

export type StreamInput = 'settle' | 'finish' | 'store-failed' | 'retire';

/** The next phase, or `undefined` where the input is refused (the phase stays). */
type Next = StreamPhase | undefined;

/** Every (phase, input) pair, spelled out: no default branch can hide a missing case. */
const TABLE: Record<StreamPhase, Record<StreamInput, Next>> = {
  open: { settle: 'completing', finish: undefined, 'store-failed': 'broken', retire: 'retired' },
  // Settling twice is refused: the close is already on its way.
  completing: { settle: undefined, finish: 'complete', 'store-failed': 'broken', retire: 'retired' },
  // Nothing is queued once complete: no batch is left to fail.
  complete: { settle: undefined, finish: undefined, 'store-failed': undefined, retire: 'retired' },
  // Broken streams never close in the log: the session is being given up.
  broken: { settle: undefined, finish: undefined, 'store-failed': undefined, retire: 'retired' },
  retired: { settle: undefined, finish: undefined, 'store-failed': undefined, retire: undefined },
};

export const STREAM_PHASES: readonly StreamPhase[] = ['open', 'completing', 'complete', 'broken', 'retired'];
export const STREAM_INPUTS: readonly StreamInput[] = ['settle', 'finish', 'store-failed', 'retire'];

/** The phase after `input` in `phase`, or `undefined` if the input is refused there. */
export function streamTransition(phase: StreamPhase, input: StreamInput): StreamPhase | undefined {
  return TABLE[phase][input];
}

/** Does a stream in `phase` still take appends? */
export function acceptsAppends(phase: StreamPhase): boolean {
  return phase === 'open';
}
