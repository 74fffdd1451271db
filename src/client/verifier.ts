/**
 * The continuity verifier (the client's decision procedure of docs/design.md §3, with the
 * replay epoch and the hash chain). Pure: no I/O, no timers. The transport feeds it what it saw and
 * acts on the verdicts; the verifier never decides what to do about a divergence.
 *
 * On reconnect:
 * 1. non-2xx, or an `Mcp-Session-Id` echo that differs → `session-invalid`;
 * 2. `X-MCP-Replay-Epoch` differs from the checkpoint → `epoch-changed`;
 *
 * then, per stream, for the first event after the resume (the probe) and every later one:
 * 3. `seq > last + 1` → `gap`;
 * 4. `seq < last`, or `seq == last` with another chain → `replay-reset`;
 *    `seq == last` with the same chain → `boundary-replay` (drop it, go on);
 * 5. `seq == last + 1` and `chain == H(last.chain ‖ data)` → `continuous`.
 *
 * The boundary is between case 5 and everything else: only `continuous` delivers, and
 * only it advances the verifier; `boundary-replay` and `duplicate` are dropped; every
 * other verdict is a divergence, terminal for that verifier (map it with
 * `toDivergenceError` from `./errors.js`).
 */
import { CONTINUOUS, type ReconnectInfo, type ReconnectOptions, type ReconnectVerdict } from './verdicts.js';

export {
  CONTINUOUS,
  isDivergence,
  type BoundaryReplay,
  type ChainMismatch,
  type Continuous,
  type DivergenceVerdict,
  type Duplicate,
  type EpochChanged,
  type EventVerdict,
  type ForeignStream,
  type Gap,
  type IdScheme,
  type ReconnectInfo,
  type ReconnectOptions,
  type ReconnectVerdict,
  type ReplayReset,
  type SessionInvalid,
  type StreamCheckpoint,
  type StreamDivergence,
  type Undetectable,
  type Verdict,
} from './verdicts.js';
export { createStreamVerifier, DEFAULT_RECENT_ID_WINDOW, idScheme, type StreamVerifier, type StreamVerifierOptions } from './stream-verifier.js';
export { isStreamCheckpoint, MAX_CHECKPOINT_ID_LENGTH, streamCheckpointProblem } from './stream-checkpoint.js';

/**
 * Steps 1–2 of the decision procedure: may the response to a resume `GET` carry the checkpoint's
 * session at all? `continuous` here only means "nothing contradicts it yet"; the first
 * event decides (see `createStreamVerifier`).
 *
 * A missing epoch on both sides passes (a foreign server without epochs: the event IDs
 * then decide, and opaque ones prove nothing). One side missing is a change: a server that
 * stops or starts naming its log generation is not the one the checkpoint saw.
 */
export function verifyReconnect(
  checkpoint: { readonly sessionId: string; readonly epoch: string | null },
  info: ReconnectInfo,
  options: ReconnectOptions = {},
): ReconnectVerdict {
  const expected = checkpoint.sessionId;
  // [decision 1] Non-2xx (404 included: the official clients do not re-initialize on it).
  if (!(info.status >= 200 && info.status <= 299)) {
    const base = { kind: 'session-invalid', cause: 'status', status: info.status, expected, actual: info.sessionId } as const;
    return info.reason === undefined ? base : { ...base, serverReason: info.reason };
  }
  if (info.sessionId === null) {
    if (options.requireSessionEcho === true) {
      return { kind: 'session-invalid', cause: 'session-missing', status: info.status, expected, actual: null };
    }
  } else if (info.sessionId !== expected) {
    // [session resurrection] Another session answering under our request.
    return { kind: 'session-invalid', cause: 'session-changed', status: info.status, expected, actual: info.sessionId };
  }
  if (info.epoch !== checkpoint.epoch) {
    return { kind: 'epoch-changed', expected: checkpoint.epoch, actual: info.epoch };
  }
  return CONTINUOUS;
}
