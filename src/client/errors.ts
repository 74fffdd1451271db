/**
 * Client-side error types: what the client raises when a resumed stream cannot be proven
 * continuous (docs/design.md §3), and when its persisted checkpoint cannot be read. Their codes
 * live in the one shared table (`src/protocol/errors.ts`); these classes add the verdict.
 *
 * Every divergence is terminal for the stream and means "re-initialize": none is
 * retryable, because retrying the same resume against the same server would only repeat
 * the same unprovable answer.
 */
import { ContinuityError } from '../protocol/errors.js';
import type { UnfinishedRequest } from './unfinished.js';
import type { DivergenceVerdict } from './verdicts.js';

/** A divergence code: the `kind` of a {@link DivergenceVerdict}. */
export type DivergenceCode = DivergenceVerdict['kind'];
/** A checkpoint error code. */
export type CheckpointErrorCode = 'checkpoint-corrupt' | 'checkpoint-mismatch';

export const DIVERGENCE_CODES: ReadonlySet<string> = new Set<DivergenceCode>([
  'session-invalid',
  'epoch-changed',
  'gap',
  'replay-reset',
  'chain-mismatch',
  'foreign-stream',
  'undetectable',
]);

const DIVERGENCE_BRAND = Symbol.for('mcp-continuity.divergence');
const CHECKPOINT_BRAND = Symbol.for('mcp-continuity.checkpoint');

/**
 * A resumed stream could not be proven continuous. `verdict` says exactly how; `code` is
 * its `kind`. The client fails the stream's in-flight requests with it (never re-sends
 * them) and re-initializes.
 *
 * @example
 * ```ts
 * if (isDivergenceError(err, 'gap')) log(`lost ${err.verdict.actualSeq - err.verdict.expectedSeq} events`);
 * ```
 */
export class DivergenceError extends ContinuityError {
  declare readonly code: DivergenceCode;
  readonly verdict: DivergenceVerdict;

  constructor(verdict: DivergenceVerdict, message?: string, options?: { cause?: unknown }) {
    const { kind, ...detail } = verdict;
    super(kind, message, detail, options);
    this.name = 'DivergenceError';
    this.verdict = verdict;
  }

  /** Works across module copies (dual packages, bundles). */
  static override [Symbol.hasInstance](value: unknown): boolean {
    if (this !== DivergenceError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[DIVERGENCE_BRAND] === true;
  }
}
Object.defineProperty(DivergenceError.prototype, DIVERGENCE_BRAND, { value: true });

/** A {@link DivergenceError} whose `code` (and so `verdict`) is known. */
export type DivergenceErrorOf<C extends DivergenceCode> = DivergenceError & { readonly code: C; readonly verdict: Extract<DivergenceVerdict, { kind: C }> };

/** Type guard: is `value` a {@link DivergenceError} (optionally with the given code)? Narrows `verdict` too. */
export function isDivergenceError<C extends DivergenceCode = DivergenceCode>(value: unknown, code?: C): value is DivergenceErrorOf<C> {
  return value instanceof DivergenceError && (code === undefined || value.code === code);
}

/**
 * The persisted checkpoint cannot be used: `checkpoint-corrupt` (unreadable, malformed, too
 * large, or failing its MAC) or `checkpoint-mismatch` (taken from another server URL or
 * principal). A missing file is not an error (`load()` returns `undefined`); a present but
 * unusable one is, so that it is reported rather than mistaken for "no session yet".
 * `connect` rejects with it and the file stays as it was: the application reads
 * {@link CheckpointError.unfinished}, then clears the store (or uses another) to start afresh.
 */
export class CheckpointError extends ContinuityError {
  declare readonly code: CheckpointErrorCode;
  /**
   * The requests in flight when the checkpoint was written, as far as they could be read from
   * it (empty when none could): the calls the server may have run, for the application to
   * reconcile. Never read from a checkpoint whose MAC fails.
   */
  readonly unfinished: readonly UnfinishedRequest[];

  constructor(
    code: CheckpointErrorCode,
    message?: string,
    detail?: Record<string, unknown>,
    options?: { cause?: unknown; unfinished?: readonly UnfinishedRequest[] | undefined },
  ) {
    super(code, message, detail, options);
    this.name = 'CheckpointError';
    this.unfinished = Object.freeze([...(options?.unfinished ?? [])]);
  }

  /** Works across module copies (dual packages, bundles). */
  static override [Symbol.hasInstance](value: unknown): boolean {
    if (this !== CheckpointError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[CHECKPOINT_BRAND] === true;
  }
}
Object.defineProperty(CheckpointError.prototype, CHECKPOINT_BRAND, { value: true });

/** Type guard: is `value` a {@link CheckpointError} (optionally with the given code)? */
export function isCheckpointError(value: unknown, code?: CheckpointErrorCode): value is CheckpointError {
  return value instanceof CheckpointError && (code === undefined || value.code === code);
}

/**
 * The typed error for a divergence verdict, with a message that names the case. Throws a
 * `TypeError` for a verdict that is not a divergence (`continuous`, `boundary-replay`,
 * `duplicate`): those are not errors, and turning one into an error is a caller bug.
 */
export function toDivergenceError(verdict: DivergenceVerdict): DivergenceError {
  const kind: unknown = (verdict as { kind?: unknown }).kind;
  if (typeof kind !== 'string' || !DIVERGENCE_CODES.has(kind)) {
    throw new TypeError(`Not a divergence verdict: ${String(kind)}`);
  }
  return new DivergenceError(verdict, describe(verdict));
}

function describe(v: DivergenceVerdict): string {
  switch (v.kind) {
    case 'session-invalid':
      if (v.cause === 'status') {
        return `Session invalid on resume: HTTP ${v.status}${v.serverReason === undefined ? '' : ` (${v.serverReason})`}; re-initialize`;
      }
      if (v.cause === 'session-missing') return 'Session invalid on resume: the server did not echo Mcp-Session-Id; re-initialize';
      // Session IDs are bearer-like: a log line gets a prefix, not the whole value.
      return `Session invalid on resume: server answered for session ${short(v.actual)} instead of ${short(v.expected)}; re-initialize`;
    case 'epoch-changed':
      return `Replay epoch changed on resume: expected ${quote(v.expected)}, got ${quote(v.actual)}; the event log was reset`;
    case 'gap':
      return `Gap on stream ${quote(v.stream)}: expected seq ${v.expectedSeq}, got ${v.actualSeq}; ${v.actualSeq - v.expectedSeq} event(s) lost`;
    case 'replay-reset':
      return v.cause === 'behind'
        ? `Replay reset on stream ${quote(v.stream)}: got seq ${v.actualSeq} after processing ${v.lastSeq}`
        : `Replay reset on stream ${quote(v.stream)}: event ${v.actualSeq} was replayed with different content`;
    case 'chain-mismatch':
      return `Hash chain broken on stream ${quote(v.stream)} at seq ${v.seq}: the content does not continue the history`;
    case 'foreign-stream':
      return `Event from a foreign stream on ${quote(v.stream)}: expected ${v.part} ${quote(v.expected)}, got ${quote(v.actual)}`;
    case 'undetectable':
      return v.cause === 'opaque-id'
        ? `Continuity undetectable on stream ${quote(v.stream)}: opaque event IDs after a resume prove nothing`
        : `Continuity undetectable on stream ${quote(v.stream)}: an event without an ID cannot be placed`;
  }
}

function quote(s: string | null): string {
  return s === null ? 'none' : JSON.stringify(s.length > 48 ? `${s.slice(0, 48)}…` : s);
}

function short(s: string | null): string {
  return s === null ? 'none' : JSON.stringify(`${s.slice(0, 8)}…`);
}
