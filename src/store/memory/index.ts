/**
 * In-memory store: fast, and gone with the process. A restarted server therefore knows
 * none of its old sessions and answers 404, which makes clients re-initialize: the
 * honest outcome when the log is lost.
 */
import { ContinuityError } from '../../protocol/errors.js';
import { LocalBus, LocalOwnership } from '../local-cluster.js';
import { checkContiguous, resolveRetention } from '../rules.js';
import { toRuns, TRIMMED, type Run } from './runs.js';
import { StoreBudget, type BudgetedStream } from './budget.js';
import type { EventLog, LogEvent, ResolvedRetention, RetentionOptions, SessionRecord, SessionStore, Store, StreamHead, StreamInfo } from '../types.js';

/** Options of {@link memoryStore}. */
export interface MemoryStoreOptions {
  retention?: RetentionOptions | undefined;
  /** Clock for age-based retention and leases (tests); default `Date.now`. */
  now?: (() => number) | undefined;
  /**
   * Payload bytes (UTF-8) all streams may hold together (default 512 MiB). Past it the
   * oldest events in the store are trimmed first, whichever stream holds them: a process
   * of many sessions, or one client calling a tool with large answers again and again,
   * cannot grow the log past it.
   */
  maxTotalBytes?: number | undefined;
}

/** Default of {@link MemoryStoreOptions.maxTotalBytes}. */
export const DEFAULT_MAX_TOTAL_BYTES = 512 * 1024 * 1024;

interface MemoryStream extends BudgetedStream {
  head: StreamHead;
  /** `runs[start]` holds the event with seq `head.firstSeq`, at `skip`; the runs before it are trimmed. */
  runs: Run[];
  start: number;
  skip: number;
  /** Events kept, and their payload bytes. */
  count: number;
  bytes: number;
}

class MemoryEventLog implements EventLog {
  readonly #sessions = new Map<string, Map<string, MemoryStream>>();
  readonly #retention: ResolvedRetention;
  readonly #now: () => number;
  readonly #owners: LocalOwnership;
  readonly #bus: LocalBus;
  readonly #budget: StoreBudget;

  constructor(retention: ResolvedRetention, now: () => number, owners: LocalOwnership, bus: LocalBus, budget: StoreBudget) {
    this.#retention = retention;
    this.#now = now;
    this.#owners = owners;
    this.#bus = bus;
    this.#budget = budget;
  }

  async openStream(session: string, stream: string, seed: string, info: StreamInfo, fence?: number): Promise<void> {
    this.#owners.check(session, fence);
    let streams = this.#sessions.get(session);
    if (!streams) this.#sessions.set(session, (streams = new Map<string, MemoryStream>()));
    if (streams.has(stream)) throw new ContinuityError('store-conflict', `Stream ${stream} already exists`);
    streams.set(stream, {
      head: { ...info, requestIds: [...info.requestIds], firstSeq: 1, baseChain: seed, lastSeq: 0, lastChain: seed, closed: false },
      runs: [],
      start: 0,
      skip: 0,
      count: 0,
      bytes: 0,
      dropped: false,
    });
  }

  async append(session: string, stream: string, events: readonly LogEvent[], fence?: number): Promise<void> {
    this.#owners.check(session, fence);
    const s = this.#stream(session, stream);
    if (!s) throw new ContinuityError('store-conflict', `Stream ${stream} does not exist`);
    checkContiguous(s.head, events);
    const { runs, bytes } = toRuns(events);
    for (const run of runs) s.runs.push(run);
    s.count += events.length;
    s.bytes += bytes;
    this.#budget.added(s, runs, bytes);
    const last = events[events.length - 1];
    if (last) {
      s.head.lastSeq = last.seq;
      s.head.lastChain = last.chain;
    }
    this.#trim(s);
    this.#trimStore();
    if (last) this.#bus.notifyAppend(session, stream, s.head.lastSeq);
  }

  async read(session: string, stream: string, afterSeq: number, limit: number): Promise<LogEvent[]> {
    const s = this.#stream(session, stream);
    const from = s ? Math.max(afterSeq + 1, s.head.firstSeq) : 0;
    if (!s || from > s.head.lastSeq || limit <= 0) return [];
    // The last run that starts at or before `from` holds it.
    const { runs } = s;
    let lo = s.start;
    let hi = runs.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((runs[mid] as Run).firstSeq <= from) lo = mid;
      else hi = mid - 1;
    }
    const out: LogEvent[] = [];
    for (let r = lo, i = from - (runs[lo] as Run).firstSeq; r < runs.length && out.length < limit; r++, i = 0) {
      const run = runs[r] as Run;
      for (; i < run.count && out.length < limit; i++) out.push(run.event(i));
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
    this.#bus.notifyClose(session, stream, s.head.lastSeq);
  }

  async streams(session: string): Promise<string[]> {
    return [...(this.#sessions.get(session)?.keys() ?? [])];
  }

  async dropStream(session: string, stream: string): Promise<void> {
    const streams = this.#sessions.get(session);
    const s = streams?.get(stream);
    if (!s) return;
    streams?.delete(stream);
    this.#dropped(s);
  }

  async dropSession(session: string): Promise<void> {
    const streams = this.#sessions.get(session);
    if (!streams) return;
    this.#sessions.delete(session);
    for (const s of streams.values()) this.#dropped(s);
  }

  #dropped(s: MemoryStream): void {
    s.dropped = true;
    this.#budget.released(s.bytes, s.runs.length - s.start);
    // The budget's order may point at the stream until it is swept: let its runs go now.
    s.runs = [];
    s.start = 0;
  }

  #stream(session: string, stream: string): MemoryStream | undefined {
    return this.#sessions.get(session)?.get(stream);
  }

  /** Per-stream retention: the oldest events go while the stream is over a bound. */
  #trim(s: MemoryStream): void {
    const { maxEvents, maxBytes, maxAgeMs } = this.#retention;
    const cutoff = Number.isFinite(maxAgeMs) ? this.#now() - maxAgeMs : -Infinity;
    this.#trimWhile(s, () => s.count > maxEvents || s.bytes > maxBytes || (s.runs[s.start] as Run).at(s.skip) < cutoff);
  }

  /** The store's budget: the oldest events in the store go while all streams together are over it. */
  #trimStore(): void {
    while (this.#budget.over) {
      const s = this.#budget.oldest() as MemoryStream | undefined;
      if (!s) return;
      // Only this run: the next oldest may be another stream's.
      const run = s.runs[s.start];
      // Never spins: a stream the order says holds events always has one to trim.
      if (this.#trimWhile(s, () => this.#budget.over && s.runs[s.start] === run) === 0) return;
    }
  }

  /** Trims `s` from its oldest event while `more()` holds (and it has events); returns how many went. */
  #trimWhile(s: MemoryStream, more: () => boolean): number {
    let trimmed = 0;
    // The last event trimmed: the new base of the stream's chain.
    let lastRun: Run | undefined;
    let lastIndex = 0;
    while (s.count > 0 && more()) {
      const run = s.runs[s.start] as Run;
      const i = s.skip;
      const bytes = run.bytes(i);
      s.count--;
      s.bytes -= bytes;
      lastRun = run;
      lastIndex = i;
      let released = 0;
      if (++s.skip === run.count) {
        // Released now, not when the trimmed prefix is compacted: 1,024 runs of large
        // events would otherwise stay reachable far beyond `maxBytes`.
        s.runs[s.start] = TRIMMED;
        s.start++;
        s.skip = 0;
        released = 1;
      }
      s.head.firstSeq = run.firstSeq + i + 1;
      this.#budget.released(bytes, released);
      trimmed++;
    }
    if (lastRun) s.head.baseChain = lastRun.chain(lastIndex);
    // Compact once the dead prefix dominates, so trimming stays amortised O(1).
    if (s.start > 1024 && s.start * 2 > s.runs.length) {
      s.runs = s.runs.slice(s.start);
      s.start = 0;
    }
    return trimmed;
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
  const maxTotalBytes = options.maxTotalBytes ?? DEFAULT_MAX_TOTAL_BYTES;
  if (!(maxTotalBytes > 0)) throw new RangeError(`maxTotalBytes must be a positive number of bytes, got ${String(options.maxTotalBytes)}`);
  return {
    name: 'memory',
    durable: false,
    shared: false,
    sessions: new MemorySessionStore(ownership),
    log: new MemoryEventLog(retention, now, ownership, bus, new StoreBudget(maxTotalBytes)),
    ownership,
    bus,
    async close() {},
  };
}
