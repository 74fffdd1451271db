/**
 * How the memory store holds events: in runs of consecutive events, not one object per
 * event. A retained event costs what the garbage collector does with it: every object
 * that survives young-generation collections is copied, then promoted and marked. Kept as
 * the producer made them, a small event is three objects (the event, its chain value, its
 * payload), and at 100 B keeping a stream's log cost about a third of the server's time
 * per event. A run packs a batch's small events into one string and a few arrays; a large
 * payload is one run of its own, kept as UTF-8 outside the JS heap.
 */
import { byteLength } from '../../protocol/utf8.js';
import { encodedUtf8 } from '../../protocol/chain-hash.js';
import type { LogEvent } from '../types.js';

/** Consecutive events of one stream, `firstSeq` to `firstSeq + count - 1`. */
export interface Run {
  readonly firstSeq: number;
  readonly count: number;
  /** The `i`-th event of the run (`0 ≤ i < count`), as it was appended. */
  event(i: number): LogEvent;
  chain(i: number): string;
  at(i: number): number;
  bytes(i: number): number;
}

/**
 * Bounds of one packed run. A run is released only once all its events are trimmed, so
 * these bound what trimming leaves reachable beyond the retention limits: one run.
 */
export const RUN_MAX_EVENTS = 256;
/** UTF-16 units of chain values and payloads in one packed run. */
export const RUN_MAX_UNITS = 32 * 1024;

/**
 * Payloads at least this long (UTF-16 units) are kept off the heap (at 4 KiB this halved
 * the event-loop delay of a flat-out producer); shorter ones are packed.
 */
export const OFF_HEAP_FROM = 1024;

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder();

/** The event's byte count: the producer's, unless it cannot be right (retention adds and subtracts it, so it must be a count). */
function bytesOf(e: LogEvent): number {
  return e.bytes !== undefined && Number.isSafeInteger(e.bytes) && e.bytes >= 0 ? e.bytes : byteLength(e.payload);
}

/** Off the heap only what UTF-8 gives back unchanged (a lone surrogate would not survive). */
function keepOffHeap(payload: string): boolean {
  if (payload.length < OFF_HEAP_FROM) return false;
  const wellFormed = (payload as string & { isWellFormed?: () => boolean }).isWellFormed;
  return wellFormed !== undefined && wellFormed.call(payload);
}

/**
 * A large payload kept as UTF-8 outside the JS heap: retained payloads would otherwise be
 * copied by every young-generation collection they survive, then promoted, which at tens
 * of KiB per event costs more than the rest of the path. Replays decode it again. (Web
 * standard encoding, not `Buffer`: the memory store runs on any runtime.)
 */
class OffHeapEvent implements Run {
  readonly firstSeq: number;
  readonly count = 1;
  readonly #chain: string;
  readonly #at: number;
  readonly #bytes: number;
  readonly #raw: Uint8Array;
  constructor(event: LogEvent, bytes: number) {
    this.firstSeq = event.seq;
    this.#chain = event.chain;
    this.#at = event.at;
    this.#bytes = bytes;
    // The byte count came with the event: encode without counting again. Four spare bytes
    // (one more character, at most) show a count that was short.
    const { payload } = event;
    // The bytes the chain hash just encoded, if they are still there: copied, not encoded again.
    const utf8 = encodedUtf8(payload);
    if (utf8 !== undefined && utf8.length === bytes) {
      this.#raw = utf8.slice();
      return;
    }
    const raw = bytes > 0 && bytes <= 3 * payload.length ? new Uint8Array(bytes + 4) : undefined;
    const fits = raw !== undefined && utf8Encoder.encodeInto(payload, raw).written === bytes;
    this.#raw = raw && fits ? raw.subarray(0, bytes) : utf8Encoder.encode(payload);
  }
  event(): LogEvent {
    return { seq: this.firstSeq, chain: this.#chain, at: this.#at, bytes: this.#bytes, payload: utf8Decoder.decode(this.#raw) };
  }
  chain(): string {
    return this.#chain;
  }
  at(): number {
    return this.#at;
  }
  bytes(): number {
    return this.#bytes;
  }
}

/**
 * Small events packed: chain values and payloads joined into one string, their ends,
 * times and byte counts in arrays. Reads slice the string (UTF-16 units, so any string,
 * a lone surrogate included, reads back exactly).
 */
class PackedRun implements Run {
  readonly firstSeq: number;
  readonly count: number;
  readonly #text: string;
  /** End of event `i`'s chain value at `2i`, of its payload at `2i + 1`. */
  readonly #ends: number[];
  readonly #at: number[];
  readonly #bytes: number[];
  constructor(events: readonly LogEvent[], from: number, to: number, bytes: readonly number[]) {
    const first = events[from] as LogEvent;
    this.firstSeq = first.seq;
    this.count = to - from;
    const parts: string[] = [];
    this.#ends = [];
    this.#at = [];
    this.#bytes = bytes.slice(from, to);
    let end = 0;
    for (let i = from; i < to; i++) {
      const e = events[i] as LogEvent;
      parts.push(e.chain, e.payload);
      this.#ends.push((end += e.chain.length), (end += e.payload.length));
      this.#at.push(e.at);
    }
    this.#text = parts.join('');
  }
  event(i: number): LogEvent {
    const chainEnd = this.#ends[2 * i] as number;
    return {
      seq: this.firstSeq + i,
      chain: this.#text.slice(i === 0 ? 0 : this.#ends[2 * i - 1], chainEnd),
      payload: this.#text.slice(chainEnd, this.#ends[2 * i + 1]),
      bytes: this.#bytes[i],
      at: this.#at[i] as number,
    };
  }
  chain(i: number): string {
    return this.#text.slice(i === 0 ? 0 : this.#ends[2 * i - 1], this.#ends[2 * i]);
  }
  at(i: number): number {
    return this.#at[i] as number;
  }
  bytes(i: number): number {
    return this.#bytes[i] as number;
  }
}

/** Fills a trimmed slot until the prefix is compacted away, so a trimmed run is garbage at once. */
export const TRIMMED: Run = Object.freeze({
  firstSeq: 0,
  count: 0,
  event: () => {
    throw new RangeError('trimmed');
  },
  chain: () => '',
  at: () => 0,
  bytes: () => 0,
});

/** A contiguous batch as runs, and its payload bytes in all. */
export function toRuns(events: readonly LogEvent[]): { runs: Run[]; bytes: number } {
  const runs: Run[] = [];
  const counts = events.map(bytesOf);
  let total = 0;
  let from = 0;
  let units = 0;
  const pack = (to: number): void => {
    if (to > from) runs.push(new PackedRun(events, from, to, counts));
    from = to;
    units = 0;
  };
  for (let i = 0; i < events.length; i++) {
    const e = events[i] as LogEvent;
    const bytes = counts[i] as number;
    total += bytes;
    if (keepOffHeap(e.payload)) {
      pack(i);
      runs.push(new OffHeapEvent(e, bytes));
      from = i + 1;
      continue;
    }
    const size = e.chain.length + e.payload.length;
    if (i - from >= RUN_MAX_EVENTS || (units > 0 && units + size > RUN_MAX_UNITS)) pack(i);
    units += size;
  }
  pack(events.length);
  return { runs, bytes: total };
}
