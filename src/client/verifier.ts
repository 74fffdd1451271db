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
import { chainSeed, eventIdPrefix, isEpoch, isStreamName, tryParseEventId, tryParseEventIdIn } from '../protocol/event-id.js';
import { hashNextChain } from '../protocol/chain-hash.js';
import type { SessionCheckpoint } from './checkpoint.js';

export * from './verdicts.js';
import { CONTINUOUS, isDivergence, type EventVerdict, type ForeignStream, type IdScheme, type ReconnectInfo, type ReconnectOptions, type ReconnectVerdict, type StreamCheckpoint, type StreamDivergence } from './verdicts.js';

/**
 * Steps 1–2 of the decision procedure: may the response to a resume `GET` carry the checkpoint's
 * session at all? `continuous` here only means "nothing contradicts it yet"; the first
 * event decides (see {@link createStreamVerifier}).
 *
 * A missing epoch on both sides passes (a foreign server without epochs: the event IDs
 * then decide, and opaque ones prove nothing). One side missing is a change: a server that
 * stops or starts naming its log generation is not the one the checkpoint saw.
 */
export function verifyReconnect(
  checkpoint: Pick<SessionCheckpoint, 'sessionId' | 'epoch'>,
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

/** Options of {@link createStreamVerifier}. */
export interface StreamVerifierOptions {
  /**
   * Resume from this checkpoint: the first event is the probe of the decision procedure. Without it the
   * stream is new: a chained stream must start at seq 1 from `chainSeed(epoch, stream)`.
   */
  checkpoint?: StreamCheckpoint | undefined;
  /** The session's epoch, which a new chained stream's IDs must carry; null or absent: taken from its first event. */
  epoch?: string | null | undefined;
  /** The stream's name if known. Chained IDs must name it (else: taken from the first event); other schemes record it. */
  stream?: string | undefined;
  /**
   * Accept opaque IDs (and events without IDs) after a resume instead of reporting
   * `undetectable`. Off by default: the safe posture is to treat such a session as
   * untrusted. Exact repeats of recently seen IDs are still dropped.
   */
  trustOpaqueIds?: boolean | undefined;
  /** How many recent opaque IDs are remembered to drop repeats (default {@link DEFAULT_RECENT_ID_WINDOW}). */
  recentIdWindow?: number | undefined;
  /**
   * `contiguous` (default): decimal IDs get the integer rules. `opaque`: treat them as
   * opaque, for servers whose numbers are not contiguous per stream (timestamps, a
   * session-wide counter), which the integer rules would report as gaps.
   */
  integerIds?: 'contiguous' | 'opaque' | undefined;
}

/** Recent opaque IDs remembered by default. */
export const DEFAULT_RECENT_ID_WINDOW = 1024;

/** Checks one stream's events, in order, for the life of the stream. */
export interface StreamVerifier {
  /**
   * The verdict for the next event: `id` as received (`undefined` or `''` if it had none),
   * `data` the SSE data exactly as received (`''` for a priming event). Only `continuous`
   * advances the state; after a divergence every call returns that same verdict.
   */
  check(id: string | undefined, data: string): EventVerdict;
  /**
   * A new connection resumed this stream from {@link checkpoint}'s `lastId`: the next event
   * is a probe again. Remembered opaque IDs are kept. A no-op before any ID was seen (there
   * was nothing to resume from; a chained stream is still checked from seq 1).
   */
  reconnected(): void;
  /** The last event that was verified continuous, or undefined before the first with an ID. */
  checkpoint(): StreamCheckpoint | undefined;
  /** The divergence that ended this verifier, if any. */
  readonly diverged: StreamDivergence | undefined;
}

// Decimal counters up to 15 digits are always safe integers; longer ones are opaque.
const INTEGER = /^[0-9]{1,15}$/;

/** The scheme an ID belongs to, judged from its shape alone. */
export function idScheme(id: string): IdScheme {
  if (tryParseEventId(id) !== undefined) return 'chained';
  return INTEGER.test(id) ? 'integer' : 'opaque';
}

/** Digest of an integer-ID event: what the checkpoint keeps to recognise a boundary replay. */
function eventDigest(id: string, data: string): string {
  return hashNextChain(id, data);
}

/**
 * A verifier for one stream (closure factory, eventsource-parser style).
 *
 * Dedupe posture: chained and integer streams never drop an event by its ID alone; an ID
 * at or below the last one is a `replay-reset` unless it repeats the last event exactly
 * (same chain, or same digest), which is dropped. A replay-from-zero incident is
 * exactly ID-based dedupe swallowing a restarted stream. Opaque streams, which have no
 * order to check, drop exact repeats among the last `recentIdWindow` IDs.
 *
 * Throws `TypeError` for a checkpoint that is not a valid {@link StreamCheckpoint}.
 */
export function createStreamVerifier(options: StreamVerifierOptions = {}): StreamVerifier {
  const trust = options.trustOpaqueIds === true;
  const integerAsOpaque = options.integerIds === 'opaque';
  const windowSize = options.recentIdWindow ?? DEFAULT_RECENT_ID_WINDOW;
  if (!Number.isSafeInteger(windowSize) || windowSize < 1) {
    throw new TypeError(`recentIdWindow must be a positive integer, got ${windowSize}`);
  }

  let scheme: IdScheme | undefined;
  let stream = options.stream;
  let epoch: string | null = options.epoch ?? null;
  let lastId: string | undefined;
  /** Chained: seq; integer: value. */
  let lastSeq = 0;
  /** Chained: chain of the last event (undefined before the stream's name and epoch are known). */
  let lastChain: string | undefined;
  /** Integer: digest of the last event, computed lazily from `lastData`. */
  let lastDigest: string | undefined;
  let lastData: string | undefined;
  /** Opaque: recently accepted IDs, oldest first (a Set keeps insertion order). */
  const recent = new Set<string>();
  let probe = false;
  let diverged: StreamDivergence | undefined;

  const cp = options.checkpoint;
  if (cp !== undefined) {
    const problem = streamCheckpointProblem(cp);
    if (problem !== undefined) throw new TypeError(`Invalid stream checkpoint: ${problem}`);
    scheme = cp.scheme;
    stream = cp.stream;
    lastId = cp.lastId;
    probe = true;
    if (cp.scheme === 'chained') {
      // The checkpoint's own ID names the generation it belongs to.
      const parsed = tryParseEventId(cp.lastId);
      if (parsed === undefined) throw new TypeError('Invalid stream checkpoint: lastId');
      epoch = parsed.epoch;
      lastSeq = parsed.seq;
      lastChain = parsed.chain;
    } else if (cp.scheme === 'integer') {
      lastSeq = Number(cp.lastId);
      lastDigest = cp.digest;
    } else {
      recent.add(cp.lastId);
    }
  }

  const name = (): string => stream ?? '';

  function digest(): string | undefined {
    if (lastDigest === undefined && lastData !== undefined && lastId !== undefined) lastDigest = eventDigest(lastId, lastData);
    return lastDigest;
  }

  function remember(id: string): void {
    recent.add(id);
    if (recent.size > windowSize) {
      const oldest = recent.values().next();
      if (oldest.done !== true) recent.delete(oldest.value);
    }
  }

  function foreign(id: string, part: ForeignStream['part'], expected: string, actual: string): ForeignStream {
    return { kind: 'foreign-stream', stream: name(), id, part, expected, actual };
  }

  /** Seq/chain rules shared by chained and integer IDs (`chain` undefined: integer). */
  function position(id: string, seq: number, sameAsLast: () => boolean, wasProbe: boolean): EventVerdict | undefined {
    if (seq > lastSeq + 1) return { kind: 'gap', stream: name(), id, expectedSeq: lastSeq + 1, actualSeq: seq };
    if (seq === lastSeq) {
      if (sameAsLast()) {
        probe = false;
        return wasProbe ? { kind: 'boundary-replay', id } : { kind: 'duplicate', id };
      }
      return { kind: 'replay-reset', stream: name(), id, cause: 'content-differs', lastSeq, actualSeq: seq };
    }
    if (seq < lastSeq) return { kind: 'replay-reset', stream: name(), id, cause: 'behind', lastSeq, actualSeq: seq };
    return undefined; // seq === lastSeq + 1: the caller checks content
  }

  /** `<epoch>.<stream>.` once both are known, so the IDs of this stream parse cheaply. */
  let prefix: { epoch: string; stream: string; text: string } | undefined;
  function prefixText(): string | undefined {
    if (epoch === null || stream === undefined) return undefined;
    if (prefix?.epoch !== epoch || prefix.stream !== stream) {
      // Validated once per (epoch, stream), not per event.
      prefix = isEpoch(epoch) && isStreamName(stream) ? { epoch, stream, text: eventIdPrefix(epoch, stream) } : undefined;
    }
    return prefix?.text;
  }

  function parseChained(id: string): ReturnType<typeof tryParseEventId> {
    const text = prefixText();
    if (text === undefined || epoch === null || stream === undefined) return tryParseEventId(id);
    return tryParseEventIdIn(id, text, epoch, stream);
  }

  /**
   * Nearly every event of a chained stream is the next in line, and the one ID that
   * {@link checkChained} accepts as continuous for it is `<epoch>.<stream>.<lastSeq + 1>.
   * <H(lastChain ‖ data)>` (seq has one decimal form: no leading zeros), so one comparison
   * decides, without parsing. True: it was, and the stream advanced exactly as the full path
   * would have. False: anything else (a boundary replay, a divergence: rare), for the full path.
   */
  function nextInLine(id: string, data: string): boolean {
    if (lastChain === undefined || lastSeq >= Number.MAX_SAFE_INTEGER) return false;
    const text = prefixText();
    if (text === undefined) return false;
    const chain = hashNextChain(lastChain, data);
    if (id !== `${text}${lastSeq + 1}.${chain}`) return false;
    lastId = id;
    lastSeq++;
    lastChain = chain;
    probe = false;
    return true;
  }

  function checkChained(id: string, data: string, wasProbe: boolean): EventVerdict {
    const parsed = parseChained(id);
    if (parsed === undefined) return foreign(id, 'scheme', 'chained', idScheme(id));
    if (epoch !== null && parsed.epoch !== epoch) return foreign(id, 'epoch', epoch, parsed.epoch);
    if (stream !== undefined && parsed.stream !== stream) return foreign(id, 'stream', stream, parsed.stream);
    // A new stream's history starts at the seed bound to its epoch and name.
    const prevChain = lastChain ?? chainSeed(parsed.epoch, parsed.stream);
    const off = position(id, parsed.seq, () => parsed.chain === prevChain, wasProbe);
    if (off !== undefined) return off;
    const expectedChain = hashNextChain(prevChain, data);
    if (parsed.chain !== expectedChain) {
      return { kind: 'chain-mismatch', stream: parsed.stream, id, seq: parsed.seq, expectedChain, actualChain: parsed.chain };
    }
    scheme = 'chained';
    epoch = parsed.epoch;
    stream = parsed.stream;
    lastId = id;
    lastSeq = parsed.seq;
    lastChain = parsed.chain;
    probe = false;
    return CONTINUOUS;
  }

  function checkInteger(id: string, data: string, wasProbe: boolean): EventVerdict {
    if (!INTEGER.test(id)) return foreign(id, 'scheme', 'integer', idScheme(id));
    const value = Number(id);
    if (lastId !== undefined) {
      // No digest (a checkpoint from elsewhere) cannot vouch for a boundary: not the same.
      const same = (): boolean => {
        const d = digest();
        return d !== undefined && d === eventDigest(id, data);
      };
      const off = position(id, value, same, wasProbe);
      if (off !== undefined) return off;
    }
    // A new integer stream starts wherever the server's counter is: nothing to compare.
    scheme = 'integer';
    lastId = id;
    lastSeq = value;
    lastData = data;
    lastDigest = undefined;
    probe = false;
    return CONTINUOUS;
  }

  function checkOpaque(id: string, wasProbe: boolean): EventVerdict {
    if (wasProbe && !trust) return { kind: 'undetectable', stream: name(), id, cause: 'opaque-id' };
    probe = false;
    if (recent.has(id)) return wasProbe && id === lastId ? { kind: 'boundary-replay', id } : { kind: 'duplicate', id };
    scheme = 'opaque';
    lastId = id;
    remember(id);
    return CONTINUOUS;
  }

  function evaluate(id: string | undefined, data: string): EventVerdict {
    const wasProbe = probe;
    if (id === undefined || id === '') {
      // Nothing places this event. Fine on a stream that never had IDs; not where the
      // chain or counter must cover every event, nor as the proof of a resume.
      const mustPlace = scheme === 'chained' || scheme === 'integer' || (wasProbe && !trust);
      if (mustPlace) return { kind: 'undetectable', stream: name(), id: null, cause: 'missing-id' };
      probe = false;
      return CONTINUOUS;
    }
    let s = scheme;
    if (s === undefined) {
      s = idScheme(id);
      if (s === 'integer' && integerAsOpaque) s = 'opaque';
    }
    switch (s) {
      case 'chained':
        return checkChained(id, data, wasProbe);
      case 'integer':
        return checkInteger(id, data, wasProbe);
      case 'opaque':
        // Opaque is a superset: a later ID that happens to look like another scheme is still opaque.
        return checkOpaque(id, wasProbe);
    }
  }

  return {
    check(id, data) {
      if (diverged !== undefined) return diverged;
      if (id !== undefined && nextInLine(id, data)) return CONTINUOUS;
      const verdict = evaluate(id, data);
      if (isDivergence(verdict)) diverged = verdict;
      return verdict;
    },
    reconnected() {
      if (lastId !== undefined) probe = true;
    },
    checkpoint() {
      if (lastId === undefined || scheme === undefined) return undefined;
      // Called per event by the transport: built field by field, no spreads.
      switch (scheme) {
        case 'chained': {
          const cp: StreamCheckpoint = { stream: name(), lastId, scheme, seq: lastSeq };
          if (lastChain !== undefined) cp.chain = lastChain;
          return cp;
        }
        case 'integer': {
          const cp: StreamCheckpoint = { stream: name(), lastId, scheme, seq: lastSeq };
          const d = digest();
          if (d !== undefined) cp.digest = d;
          return cp;
        }
        case 'opaque':
          return { stream: name(), lastId, scheme };
      }
    },
    get diverged() {
      return diverged;
    },
  };
}

const SCHEMES: ReadonlySet<string> = new Set<IdScheme>(['chained', 'integer', 'opaque']);
/** Longest ID a checkpoint keeps: SSE IDs are unbounded on the wire, a checkpoint is not. */
export const MAX_CHECKPOINT_ID_LENGTH = 1024;
const MAX_STREAM_KEY_LENGTH = 256;
const DIGEST = /^[A-Za-z0-9_-]{16}$/;

/** Is `value` a well-formed {@link StreamCheckpoint} (internally consistent, too)? */
export function isStreamCheckpoint(value: unknown): value is StreamCheckpoint {
  return streamCheckpointProblem(value) === undefined;
}

/** What is wrong with `value` as a {@link StreamCheckpoint}, or undefined if nothing. */
export function streamCheckpointProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not an object';
  const v = value as Record<string, unknown>;
  if (typeof v.stream !== 'string' || v.stream.length > MAX_STREAM_KEY_LENGTH) return 'stream';
  if (typeof v.lastId !== 'string' || v.lastId.length === 0 || v.lastId.length > MAX_CHECKPOINT_ID_LENGTH) return 'lastId';
  if (typeof v.scheme !== 'string' || !SCHEMES.has(v.scheme)) return 'scheme';
  if (v.updatedAt !== undefined && !(typeof v.updatedAt === 'number' && Number.isFinite(v.updatedAt))) return 'updatedAt';
  if (v.complete !== undefined && typeof v.complete !== 'boolean') return 'complete';
  if (v.scheme === 'chained') {
    const parsed = tryParseEventId(v.lastId);
    if (parsed === undefined) return 'lastId';
    if (parsed.stream !== v.stream) return 'stream';
    if (v.seq !== undefined && v.seq !== parsed.seq) return 'seq';
    if (v.chain !== undefined && v.chain !== parsed.chain) return 'chain';
  } else if (v.scheme === 'integer') {
    if (!INTEGER.test(v.lastId)) return 'lastId';
    if (v.seq !== undefined && v.seq !== Number(v.lastId)) return 'seq';
    if (v.digest !== undefined && !(typeof v.digest === 'string' && DIGEST.test(v.digest))) return 'digest';
  }
  return undefined;
}
