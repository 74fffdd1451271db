/**
 * One stream's verifier: steps 3-5 of the decision procedure (see `./verifier.ts`) for
 * every event of the stream, with the hash chain. Pure: no I/O, no timers.
 */
import { chainSeed, eventIdPrefix, isEpoch, isStreamName, tryParseEventId, tryParseEventIdIn } from '../protocol/event-id.js';
import { hashNextChain } from '../protocol/chain-hash.js';
import { INTEGER_ID, streamCheckpointProblem } from './stream-checkpoint.js';
import { CONTINUOUS, isDivergence, type EventVerdict, type ForeignStream, type IdScheme, type StreamCheckpoint, type StreamDivergence } from './verdicts.js';

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

/** The scheme an ID belongs to, judged from its shape alone. */
export function idScheme(id: string): IdScheme {
  if (tryParseEventId(id) !== undefined) return 'chained';
  return INTEGER_ID.test(id) ? 'integer' : 'opaque';
}

/** Digest of an integer-ID event: what the checkpoint keeps to recognise a boundary replay. */
function eventDigest(id: string, data: string): string {
  return hashNextChain(id, data);
}

/**
 * A verifier for one stream.
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
  return new StreamVerification(options);
}

/** The state of one stream's verification: where it stands, and what decides the next event. */
class StreamVerification implements StreamVerifier {
  readonly #trust: boolean;
  readonly #integerAsOpaque: boolean;
  readonly #windowSize: number;
  #scheme: IdScheme | undefined;
  #stream: string | undefined;
  #epoch: string | null;
  #lastId: string | undefined;
  /** Chained: seq; integer: value. */
  #lastSeq = 0;
  /** Chained: chain of the last event (undefined before the stream's name and epoch are known). */
  #lastChain: string | undefined;
  /** Integer: digest of the last event, computed lazily from `#lastData`. */
  #lastDigest: string | undefined;
  #lastData: string | undefined;
  /** Opaque: recently accepted IDs, oldest first (a Set keeps insertion order). */
  readonly #recent = new Set<string>();
  #probe = false;
  #diverged: StreamDivergence | undefined;
  /** `<epoch>.<stream>.` once both are known, so the IDs of this stream parse cheaply. */
  #prefix: { epoch: string; stream: string; text: string } | undefined;

  constructor(options: StreamVerifierOptions) {
    this.#trust = options.trustOpaqueIds === true;
    this.#integerAsOpaque = options.integerIds === 'opaque';
    this.#windowSize = options.recentIdWindow ?? DEFAULT_RECENT_ID_WINDOW;
    if (!Number.isSafeInteger(this.#windowSize) || this.#windowSize < 1) {
      throw new TypeError(`recentIdWindow must be a positive integer, got ${this.#windowSize}`);
    }
    this.#stream = options.stream;
    this.#epoch = options.epoch ?? null;
    if (options.checkpoint !== undefined) this.#restore(options.checkpoint);
  }

  get diverged(): StreamDivergence | undefined {
    return this.#diverged;
  }

  check(id: string | undefined, data: string): EventVerdict {
    if (this.#diverged !== undefined) return this.#diverged;
    if (id !== undefined && this.#nextInLine(id, data)) return CONTINUOUS;
    const verdict = this.#evaluate(id, data);
    if (isDivergence(verdict)) this.#diverged = verdict;
    return verdict;
  }

  reconnected(): void {
    if (this.#lastId !== undefined) this.#probe = true;
  }

  checkpoint(): StreamCheckpoint | undefined {
    const lastId = this.#lastId;
    const scheme = this.#scheme;
    if (lastId === undefined || scheme === undefined) return undefined;
    // Called per event by the transport: built field by field, no spreads.
    switch (scheme) {
      case 'chained': {
        const cp: StreamCheckpoint = { stream: this.#name(), lastId, scheme, seq: this.#lastSeq };
        if (this.#lastChain !== undefined) cp.chain = this.#lastChain;
        return cp;
      }
      case 'integer': {
        const cp: StreamCheckpoint = { stream: this.#name(), lastId, scheme, seq: this.#lastSeq };
        const d = this.#digest();
        if (d !== undefined) cp.digest = d;
        return cp;
      }
      case 'opaque':
        return { stream: this.#name(), lastId, scheme };
    }
  }

  #restore(cp: StreamCheckpoint): void {
    const problem = streamCheckpointProblem(cp);
    if (problem !== undefined) throw new TypeError(`Invalid stream checkpoint: ${problem}`);
    this.#scheme = cp.scheme;
    this.#stream = cp.stream;
    this.#lastId = cp.lastId;
    this.#probe = true;
    if (cp.scheme === 'chained') {
      // The checkpoint's own ID names the generation it belongs to.
      const parsed = tryParseEventId(cp.lastId);
      if (parsed === undefined) throw new TypeError('Invalid stream checkpoint: lastId');
      this.#epoch = parsed.epoch;
      this.#lastSeq = parsed.seq;
      this.#lastChain = parsed.chain;
    } else if (cp.scheme === 'integer') {
      this.#lastSeq = Number(cp.lastId);
      this.#lastDigest = cp.digest;
    } else {
      this.#recent.add(cp.lastId);
    }
  }

  #name(): string {
    return this.#stream ?? '';
  }

  #digest(): string | undefined {
    if (this.#lastDigest === undefined && this.#lastData !== undefined && this.#lastId !== undefined) {
      this.#lastDigest = eventDigest(this.#lastId, this.#lastData);
    }
    return this.#lastDigest;
  }

  #remember(id: string): void {
    this.#recent.add(id);
    if (this.#recent.size > this.#windowSize) {
      const oldest = this.#recent.values().next();
      if (oldest.done !== true) this.#recent.delete(oldest.value);
    }
  }

  #foreign(id: string, part: ForeignStream['part'], expected: string, actual: string): ForeignStream {
    return { kind: 'foreign-stream', stream: this.#name(), id, part, expected, actual };
  }

  /** Seq/chain rules shared by chained and integer IDs. */
  #position(id: string, seq: number, sameAsLast: () => boolean, wasProbe: boolean): EventVerdict | undefined {
    const lastSeq = this.#lastSeq;
    if (seq > lastSeq + 1) return { kind: 'gap', stream: this.#name(), id, expectedSeq: lastSeq + 1, actualSeq: seq };
    if (seq === lastSeq) {
      if (sameAsLast()) {
        this.#probe = false;
        return wasProbe ? { kind: 'boundary-replay', id } : { kind: 'duplicate', id };
      }
      return { kind: 'replay-reset', stream: this.#name(), id, cause: 'content-differs', lastSeq, actualSeq: seq };
    }
    if (seq < lastSeq) return { kind: 'replay-reset', stream: this.#name(), id, cause: 'behind', lastSeq, actualSeq: seq };
    return undefined; // seq === lastSeq + 1: the caller checks content
  }

  #prefixText(): string | undefined {
    const epoch = this.#epoch;
    const stream = this.#stream;
    if (epoch === null || stream === undefined) return undefined;
    if (this.#prefix?.epoch !== epoch || this.#prefix.stream !== stream) {
      // Validated once per (epoch, stream), not per event.
      this.#prefix = isEpoch(epoch) && isStreamName(stream) ? { epoch, stream, text: eventIdPrefix(epoch, stream) } : undefined;
    }
    return this.#prefix?.text;
  }

  #parseChained(id: string): ReturnType<typeof tryParseEventId> {
    const text = this.#prefixText();
    if (text === undefined || this.#epoch === null || this.#stream === undefined) return tryParseEventId(id);
    return tryParseEventIdIn(id, text, this.#epoch, this.#stream);
  }

  /**
   * Nearly every event of a chained stream is the next in line, and the one ID that
   * {@link #checkChained} accepts as continuous for it is `<epoch>.<stream>.<lastSeq + 1>.
   * <H(lastChain ‖ data)>` (seq has one decimal form: no leading zeros), so one comparison
   * decides, without parsing. True: it was, and the stream advanced exactly as the full path
   * would have. False: anything else (a boundary replay, a divergence: rare), for the full path.
   */
  #nextInLine(id: string, data: string): boolean {
    if (this.#lastChain === undefined || this.#lastSeq >= Number.MAX_SAFE_INTEGER) return false;
    const text = this.#prefixText();
    if (text === undefined) return false;
    const chain = hashNextChain(this.#lastChain, data);
    if (id !== `${text}${this.#lastSeq + 1}.${chain}`) return false;
    this.#lastId = id;
    this.#lastSeq++;
    this.#lastChain = chain;
    this.#probe = false;
    return true;
  }

  #checkChained(id: string, data: string, wasProbe: boolean): EventVerdict {
    const parsed = this.#parseChained(id);
    if (parsed === undefined) return this.#foreign(id, 'scheme', 'chained', idScheme(id));
    if (this.#epoch !== null && parsed.epoch !== this.#epoch) return this.#foreign(id, 'epoch', this.#epoch, parsed.epoch);
    if (this.#stream !== undefined && parsed.stream !== this.#stream) return this.#foreign(id, 'stream', this.#stream, parsed.stream);
    // A new stream's history starts at the seed bound to its epoch and name.
    const prevChain = this.#lastChain ?? chainSeed(parsed.epoch, parsed.stream);
    const off = this.#position(id, parsed.seq, () => parsed.chain === prevChain, wasProbe);
    if (off !== undefined) return off;
    const expectedChain = hashNextChain(prevChain, data);
    if (parsed.chain !== expectedChain) {
      return { kind: 'chain-mismatch', stream: parsed.stream, id, seq: parsed.seq, expectedChain, actualChain: parsed.chain };
    }
    this.#scheme = 'chained';
    this.#epoch = parsed.epoch;
    this.#stream = parsed.stream;
    this.#lastId = id;
    this.#lastSeq = parsed.seq;
    this.#lastChain = parsed.chain;
    this.#probe = false;
    return CONTINUOUS;
  }

  #checkInteger(id: string, data: string, wasProbe: boolean): EventVerdict {
    if (!INTEGER_ID.test(id)) return this.#foreign(id, 'scheme', 'integer', idScheme(id));
    const value = Number(id);
    if (this.#lastId !== undefined) {
      // No digest (a checkpoint from elsewhere) cannot vouch for a boundary: not the same.
      const same = (): boolean => {
        const d = this.#digest();
        return d !== undefined && d === eventDigest(id, data);
      };
      const off = this.#position(id, value, same, wasProbe);
      if (off !== undefined) return off;
    }
    // A new integer stream starts wherever the server's counter is: nothing to compare.
    this.#scheme = 'integer';
    this.#lastId = id;
    this.#lastSeq = value;
    this.#lastData = data;
    this.#lastDigest = undefined;
    this.#probe = false;
    return CONTINUOUS;
  }

  #checkOpaque(id: string, wasProbe: boolean): EventVerdict {
    if (wasProbe && !this.#trust) return { kind: 'undetectable', stream: this.#name(), id, cause: 'opaque-id' };
    this.#probe = false;
    if (this.#recent.has(id)) return wasProbe && id === this.#lastId ? { kind: 'boundary-replay', id } : { kind: 'duplicate', id };
    this.#scheme = 'opaque';
    this.#lastId = id;
    this.#remember(id);
    return CONTINUOUS;
  }

  #evaluate(id: string | undefined, data: string): EventVerdict {
    const wasProbe = this.#probe;
    if (id === undefined || id === '') {
      // Nothing places this event. Fine on a stream that never had IDs; not where the
      // chain or counter must cover every event, nor as the proof of a resume.
      const mustPlace = this.#scheme === 'chained' || this.#scheme === 'integer' || (wasProbe && !this.#trust);
      if (mustPlace) return { kind: 'undetectable', stream: this.#name(), id: null, cause: 'missing-id' };
      this.#probe = false;
      return CONTINUOUS;
    }
    let s = this.#scheme;
    if (s === undefined) {
      s = idScheme(id);
      if (s === 'integer' && this.#integerAsOpaque) s = 'opaque';
    }
    switch (s) {
      case 'chained':
        return this.#checkChained(id, data, wasProbe);
      case 'integer':
        return this.#checkInteger(id, data, wasProbe);
      case 'opaque':
        // Opaque is a superset: a later ID that happens to look like another scheme is still opaque.
        return this.#checkOpaque(id, wasProbe);
    }
  }
}
