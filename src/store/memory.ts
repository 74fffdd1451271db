/**
 * In-memory store: fast, and gone with the process. A restarted server therefore knows
 * none of its old sessions and answers 404, which makes clients re-initialize: the
 * honest outcome when the log is lost.
 */
import { ContinuityError } from '../protocol/errors.js';
import { LocalBus, LocalOwnership } from './local-cluster.js';
import { byteLength, checkContiguous, resolveRetention } from './rules.js';
import type {
  EventLog, LogEvent, ResolvedRetention, RetentionOptions, SessionRecord, SessionStore, Store, StreamHead, StreamInfo,
} from './types.js';

/** Options of {@link memoryStore}. */
export interface MemoryStoreOptions {
  retention?: RetentionOptions | undefined;
  /** Clock for age-based retention and leases (tests); default `Date.now`. */
  now?: (() => number) | undefined;
}

/** Fills a trimmed slot until the prefix is compacted away, so a trimmed payload is garbage at once. */
const TRIMMED: LogEvent = Object.freeze({ seq: 0, chain: '', payload: '', bytes: 0, at: 0 });

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder();

/**
 * A large payload kept as UTF-8 outside the JS heap: retained payloads would otherwise be
 * copied by every young-generation collection they survive, then promoted, which at tens
 * of KiB per event costs more than the rest of the path. Replays decode it again. (Web
 * standard encoding, not `Buffer`: the memory store runs on any runtime.)
 */
class OffHeapEvent {
  readonly seq: number;
  readonly chain: string;
  readonly at: number;
  readonly bytes: number;
  readonly #raw: Uint8Array;
  constructor(event: LogEvent, bytes: number) {
    this.seq = event.seq;
    this.chain = event.chain;
    this.at = event.at;
    this.bytes = bytes;
    // The byte count came with the event: encode without counting again. Four spare bytes
    // (one more character, at most) show a count that was short.
    const { payload } = event;
    const raw = Number.isSafeInteger(bytes) && bytes > 0 && bytes <= 3 * payload.length ? new Uint8Array(bytes + 4) : undefined;
    const fits = raw !== undefined && utf8Encoder.encodeInto(payload, raw).written === bytes;
    this.#raw = raw && fits ? raw.subarray(0, bytes) : utf8Encoder.encode(payload);
  }
  toEvent(): LogEvent {
    return { seq: this.seq, chain: this.chain, at: this.at, bytes: this.bytes, payload: utf8Decoder.decode(this.#raw) };
  }
}

/**
 * Payloads at least this long (UTF-16 units) are kept off the heap (at 4 KiB this halved
 * the event-loop delay of a flat-out producer); shorter ones cost less as strings.
 */
const OFF_HEAP_FROM = 1024;

/** Off the heap only what UTF-8 gives back unchanged (a lone surrogate would not survive). */
function keepOffHeap(payload: string): boolean {
  if (payload.length < OFF_HEAP_FROM) return false;
  const wellFormed = (payload as string & { isWellFormed?: () => boolean }).isWellFormed;
  return wellFormed !== undefined && wellFormed.call(payload);
}

type Kept = LogEvent | OffHeapEvent;

/** The event's byte count: the producer's, unless it cannot be right (retention adds and subtracts it, so it must be a count). */
function bytesOf(e: LogEvent): number {
  return e.bytes !== undefined && Number.isSafeInteger(e.bytes) && e.bytes >= 0 ? e.bytes : byteLength(e.payload);
}

interface MemoryStream {
  head: StreamHead;
  /** `events[start]` is the event with seq `head.firstSeq`; the prefix before it is trimmed. */
  events: Kept[];
  start: number;
  bytes: number;
}

class MemoryEventLog implements EventLog {
  readonly #sessions = new Map<string, Map<string, MemoryStream>>();
  readonly #retention: ResolvedRetention;
  readonly #now: () => number;
  readonly #owners: LocalOwnership;
  readonly #bus: LocalBus;

  constructor(retention: ResolvedRetention, now: () => number, owners: LocalOwnership, bus: LocalBus) {
    this.#retention = retention;
    this.#now = now;
    this.#owners = owners;
    this.#bus = bus;
  }

  async openStream(session: string, stream: string, seed: string, info: StreamInfo, fence?: number): Promise<void> {
    this.#owners.check(session, fence);
    let streams = this.#sessions.get(session);
    if (!streams) this.#sessions.set(session, (streams = new Map()));
    if (streams.has(stream)) throw new ContinuityError('store-conflict', `Stream ${stream} already exists`);
    streams.set(stream, {
      head: { ...info, requestIds: [...info.requestIds], firstSeq: 1, baseChain: seed, lastSeq: 0, lastChain: seed, closed: false },
      events: [],
      start: 0,
      bytes: 0,
    });
  }

  async append(session: string, stream: string, events: readonly LogEvent[], fence?: number): Promise<void> {
    this.#owners.check(session, fence);
    const s = this.#stream(session, stream);
    if (!s) throw new ContinuityError('store-conflict', `Stream ${stream} does not exist`);
    checkContiguous(s.head, events);
    for (const e of events) {
      const bytes = bytesOf(e);
      s.events.push(keepOffHeap(e.payload) ? new OffHeapEvent(e, bytes) : e);
      s.bytes += bytes;
    }
    const last = events[events.length - 1];
    if (last) {
      s.head.lastSeq = last.seq;
      s.head.lastChain = last.chain;
    }
    this.#trim(s);
    if (last) this.#bus.notify(session, stream, s.head.lastSeq, false);
  }

  async read(session: string, stream: string, afterSeq: number, limit: number): Promise<LogEvent[]> {
    const s = this.#stream(session, stream);
    if (!s) return [];
    const from = Math.max(afterSeq + 1, s.head.firstSeq);
    const i = s.start + (from - s.head.firstSeq);
    const out: LogEvent[] = s.events.slice(i, i + limit) as LogEvent[];
    for (let j = 0; j < out.length; j++) {
      const e = out[j] as Kept;
      if (e instanceof OffHeapEvent) out[j] = e.toEvent();
    }
    return out;
  }

  async head(session: string, stream: string): Promise<StreamHead | undefined> {
    const s = this.#stream(session, stream);
    return s && { ...s.head, requestIds: [...s.head.requestIds] };
  }

  async closeStream(session: string, stream: string, fence?: number): Promise<void> {
    this.#owners.check(session, fence);
    const s = this.#stream(session, stream);
    if (!s) return;
    s.head.closed = true;
    this.#bus.notify(session, stream, s.head.lastSeq, true);
  }

  async streams(session: string): Promise<string[]> {
    return [...(this.#sessions.get(session)?.keys() ?? [])];
  }

  async dropStream(session: string, stream: string): Promise<void> {
    this.#sessions.get(session)?.delete(stream);
  }

  async dropSession(session: string): Promise<void> {
    this.#sessions.delete(session);
  }

  #stream(session: string, stream: string): MemoryStream | undefined {
    return this.#sessions.get(session)?.get(stream);
  }

  #trim(s: MemoryStream): void {
    const { maxEvents, maxBytes, maxAgeMs } = this.#retention;
    const cutoff = Number.isFinite(maxAgeMs) ? this.#now() - maxAgeMs : -Infinity;
    while (s.start < s.events.length) {
      const count = s.events.length - s.start;
      const oldest = s.events[s.start] as Kept;
      if (count <= maxEvents && s.bytes <= maxBytes && oldest.at >= cutoff) break;
      // Compaction waits for a long dead prefix; the payloads in it must not (1,024 large
      // events would otherwise stay reachable far beyond `maxBytes`).
      s.events[s.start] = TRIMMED;
      s.start++;
      s.bytes -= oldest instanceof OffHeapEvent ? oldest.bytes : bytesOf(oldest);
      s.head.firstSeq = oldest.seq + 1;
      s.head.baseChain = oldest.chain;
    }
    // Compact once the dead prefix dominates, so trimming stays amortised O(1).
    if (s.start > 1024 && s.start * 2 > s.events.length) {
      s.events = s.events.slice(s.start);
      s.start = 0;
    }
  }
}

class MemorySessionStore implements SessionStore {
  readonly #records = new Map<string, SessionRecord>();
  readonly #owners: LocalOwnership;

  constructor(owners: LocalOwnership) {
    this.#owners = owners;
  }

  async create(record: SessionRecord): Promise<void> {
    if (this.#records.has(record.id)) throw new ContinuityError('store-conflict', 'Session id already exists');
    this.#records.set(record.id, clone(record));
  }
  async get(id: string): Promise<SessionRecord | undefined> {
    const r = this.#records.get(id);
    return r && clone(r);
  }
  async put(record: SessionRecord, fence?: number): Promise<void> {
    this.#owners.check(record.id, fence);
    if (this.#records.has(record.id)) this.#records.set(record.id, clone(record));
  }
  async delete(id: string): Promise<void> {
    this.#records.delete(id);
    this.#owners.forget(id);
  }
  async count(): Promise<number> {
    return this.#records.size;
  }
  async idleSince(cutoff: number, limit: number): Promise<string[]> {
    const out: string[] = [];
    for (const r of this.#records.values()) {
      if (out.length >= limit) break;
      if (r.lastActiveAt < cutoff) out.push(r.id);
    }
    return out;
  }
}

function clone(r: SessionRecord): SessionRecord {
  return { ...r, pastEpochs: [...r.pastEpochs] };
}

/**
 * A store that lives in this process's memory.
 *
 * @example
 * ```ts
 * import { memoryStore } from 'mcp-continuity/stores/memory';
 * const store = memoryStore({ retention: { maxEvents: 1000 } });
 * ```
 */
export function memoryStore(options: MemoryStoreOptions = {}): Store {
  const retention = resolveRetention(options.retention);
  const now = options.now ?? Date.now;
  const ownership = new LocalOwnership(now);
  const bus = new LocalBus();
  return {
    name: 'memory',
    durable: false,
    shared: false,
    sessions: new MemorySessionStore(ownership),
    log: new MemoryEventLog(retention, now, ownership, bus),
    ownership,
    bus,
    async close() {},
  };
}
