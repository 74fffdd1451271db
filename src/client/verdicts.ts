/**
 * The verifier's vocabulary: stream checkpoints and verdicts, each discriminated by
 * `kind`. Types only, plus the one shared `continuous` verdict and its guard.
 */

/**
 * How a stream's event IDs can be checked:
 * - `chained`: this project's `<epoch>.<stream>.<seq>.<chain>`: position and content;
 * - `integer`: decimal counters (foreign servers): position only, taken as contiguous per
 *   stream, as the decision procedure for integer IDs assumes (docs/design.md §3);
 * - `opaque`: anything else: no position at all.
 */
export type IdScheme = 'chained' | 'integer' | 'opaque';

/** The last fully processed event of one stream: where a resume starts. */
export interface StreamCheckpoint {
  /** Stream name: the `<stream>` part of a chained ID; for other schemes, the caller's key. */
  stream: string;
  /** The ID to send as `Last-Event-ID`. */
  lastId: string;
  scheme: IdScheme;
  /** Chained: the `seq` of `lastId`; integer: its value. Redundant with `lastId`, kept for reading. */
  seq?: number;
  /** Chained: the chain of `lastId`. */
  chain?: string;
  /**
   * Integer: `H(lastId ‖ data)` of the last event, the seed's "semantic digest", so that a
   * replayed boundary event can be told from another event reusing the same number.
   */
  digest?: string;
  /** When the caller last saved this stream (ms since the epoch); picks what to drop at the bound. */
  updatedAt?: number;
  /** The stream ended normally; nothing will be resumed on it (dropped first at the bound). */
  complete?: boolean;
}

/** What the resume `GET` answered, before any event. */
export interface ReconnectInfo {
  status: number;
  /** `Mcp-Session-Id` of the response, or null if absent. */
  sessionId: string | null;
  /** `X-MCP-Replay-Epoch` of the response, or null if absent. */
  epoch: string | null;
  /** `error.data.reason` of a refusal body, when the caller parsed one (reported, not judged). */
  reason?: string | undefined;
}

/** Options of {@link verifyReconnect}. */
export interface ReconnectOptions {
  /**
   * Treat a response without an `Mcp-Session-Id` echo as `session-invalid`. Off by default:
   * the decision procedure accepts either liveness signal, and a 2xx for a session the server checks is one.
   */
  requireSessionEcho?: boolean;
}

/** Nothing contradicts continuity: deliver (for an event: it continues the stream). */
export interface Continuous {
  readonly kind: 'continuous';
}
/** The first event after a resume repeats the last processed one exactly: drop it, go on. */
export interface BoundaryReplay {
  readonly kind: 'boundary-replay';
  readonly id: string;
}
/** An event already processed, repeated later in the stream: drop it. */
export interface Duplicate {
  readonly kind: 'duplicate';
  readonly id: string;
}
/** Step 1: the server did not answer for the checkpoint's session. */
export interface SessionInvalid {
  readonly kind: 'session-invalid';
  /** `status`: non-2xx; `session-changed`: the echo differs; `session-missing`: no echo (only with `requireSessionEcho`). */
  readonly cause: 'status' | 'session-changed' | 'session-missing';
  readonly status: number;
  readonly expected: string;
  readonly actual: string | null;
  /** The refusal's `error.data.reason`, if the caller passed it. */
  readonly serverReason?: string;
}
/** Step 2: the server's event log is another generation than the one the checkpoint saw. */
export interface EpochChanged {
  readonly kind: 'epoch-changed';
  readonly expected: string | null;
  readonly actual: string | null;
}
/** Events `expectedSeq .. actualSeq - 1` were skipped. */
export interface Gap {
  readonly kind: 'gap';
  readonly stream: string;
  readonly id: string;
  readonly expectedSeq: number;
  readonly actualSeq: number;
}
/** The stream went back (`behind`), or the last position was replayed with other content. */
export interface ReplayReset {
  readonly kind: 'replay-reset';
  readonly stream: string;
  readonly id: string;
  readonly cause: 'behind' | 'content-differs';
  readonly lastSeq: number;
  readonly actualSeq: number;
}
/** The next position, but its content does not continue the history: `chain != H(prev ‖ data)`. */
export interface ChainMismatch {
  readonly kind: 'chain-mismatch';
  readonly stream: string;
  readonly id: string;
  readonly seq: number;
  readonly expectedChain: string;
  readonly actualChain: string;
}
/** An event of another epoch, stream or ID scheme than the stream being followed. */
export interface ForeignStream {
  readonly kind: 'foreign-stream';
  readonly stream: string;
  readonly id: string;
  readonly part: 'epoch' | 'stream' | 'scheme';
  readonly expected: string;
  readonly actual: string;
}
/** Nothing can be proven: an opaque ID after a resume, or an event without an ID where one was due. */
export interface Undetectable {
  readonly kind: 'undetectable';
  readonly stream: string;
  readonly id: string | null;
  readonly cause: 'opaque-id' | 'missing-id';
}

/** Every verdict, discriminated by `kind`. */
export type Verdict =
  Continuous | BoundaryReplay | Duplicate | SessionInvalid | EpochChanged | Gap | ReplayReset | ChainMismatch | ForeignStream | Undetectable;

/** Verdicts of {@link verifyReconnect}. */
export type ReconnectVerdict = Continuous | SessionInvalid | EpochChanged;
/** Verdicts of {@link StreamVerifier.check}. */
export type EventVerdict = Exclude<Verdict, SessionInvalid | EpochChanged>;
/** Verdicts that mean "continuity is not proven: re-initialize". */
export type DivergenceVerdict = Exclude<Verdict, Continuous | BoundaryReplay | Duplicate>;
/** Divergences found in a stream's events. */
export type StreamDivergence = Exclude<EventVerdict, Continuous | BoundaryReplay | Duplicate>;

/** The one `continuous` verdict: the hot path allocates nothing. */
export const CONTINUOUS: Continuous = Object.freeze({ kind: 'continuous' });

/** Is this verdict a divergence (as opposed to deliver or drop)? */
export function isDivergence(verdict: Verdict): verdict is DivergenceVerdict {
  return verdict.kind !== 'continuous' && verdict.kind !== 'boundary-replay' && verdict.kind !== 'duplicate';
}
