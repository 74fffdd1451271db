/**
 * The SQLite log's write path: group commit, one row per append, retention.
 *
 * Group commit: appends made in one synchronous stretch (the server flushes every stream
 * of a turn in one loop, `../server/turns.ts`) are committed together, in one
 * `BEGIN IMMEDIATE` transaction, on the next microtask. A commit costs pages that every
 * append touches (the stream heads', the index's, the newest rows'), written to the WAL
 * once per commit instead of once per stream. Each append still succeeds or fails alone:
 * everything that can refuse an append (ownership, a missing or closed stream, a gap) is
 * checked before it writes, so a refused append is left out and the others commit. A
 * failure while writing (disk full, I/O) rolls back the whole transaction and fails every
 * append in it; none is in the log. Every other use of the connection commits what is
 * queued first, so operations take effect in the order they were called.
 *
 * Retention runs in the transaction of the append that triggers it, on whole rows where
 * it can: a row wholly below the count limit goes by its byte total, and only the row the
 * cut lands in is decoded. Rows partly below the low watermark stay until all of their
 * events are trimmed.
 */
import Database from 'better-sqlite3';
import { ContinuityError } from '../protocol/errors.js';
import type { LocalBus, LocalOwnership } from './local-cluster.js';
import { checkContiguous } from './rules.js';
import { atOf, batchMeta, chainOf, packBatch, type BatchColumns, type BatchMeta, type BatchRow } from './sqlite-batches.js';
import type { Connection } from './sqlite-statements.js';
import type { LogEvent, ResolvedRetention, StreamHead } from './types.js';

/** Pages a commit writes besides the payloads: per commit, and per append (its head, its index entry). */
const PAGE_ESTIMATE = 4096;

interface Queued {
  session: string;
  stream: string;
  events: readonly LogEvent[];
  fence: number | undefined;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** An append that passed every check and is ready to write. */
interface Planned {
  session: string;
  stream: string;
  window: Window;
  /** Seq and chain of the batch's last event. */
  lastSeq: number;
  lastChain: string;
  /** Undefined for an empty append: checked, nothing to write. */
  batch: BatchColumns | undefined;
}

/** The part of a stream's head an append moves. */
interface Window {
  firstSeq: number;
  baseChain: string;
  lastSeq: number;
  /** Payload bytes of the events firstSeq..lastSeq. */
  bytes: number;
}

export class Appender {
  readonly #c: Connection;
  readonly #retention: ResolvedRetention;
  readonly #now: () => number;
  readonly #owners: LocalOwnership;
  readonly #bus: LocalBus;
  readonly #commit: (queue: readonly Queued[], refused: unknown[]) => void;
  #queue: Queued[] = [];
  /** Told the bytes each commit wrote (payloads plus an estimate of the pages around them). */
  onCommit: ((bytes: number) => void) | undefined;

  constructor(c: Connection, retention: ResolvedRetention, now: () => number, owners: LocalOwnership, bus: LocalBus) {
    this.#c = c;
    this.#retention = retention;
    this.#now = now;
    this.#owners = owners;
    this.#bus = bus;
    const tx = c.db.transaction((queue: readonly Queued[], refused: unknown[]) => {
      for (let i = 0; i < queue.length; i++) {
        let plan: Planned;
        try {
          plan = this.#plan(queue[i] as Queued);
        } catch (error) {
          // A failing database fails the whole transaction; anything else refuses this append.
          if (error instanceof Database.SqliteError) throw error;
          refused[i] = error;
          continue;
        }
        this.#write(plan);
      }
    });
    this.#commit = (queue, refused) => tx.immediate(queue, refused);
  }

  /** Queues an append; it commits on the next microtask (or sooner, see {@link flush}). */
  append(session: string, stream: string, events: readonly LogEvent[], fence: number | undefined): Promise<void> {
    this.#c.check();
    return new Promise((resolve, reject) => {
      if (this.#queue.push({ session, stream, events, fence, resolve, reject }) === 1) queueMicrotask(() => this.flush());
    });
  }

  /** Commits every queued append now, in one transaction, then settles their promises. */
  flush(): void {
    const queue = this.#queue;
    if (queue.length === 0) return;
    this.#queue = [];
    const refused = new Array<unknown>(queue.length);
    try {
      this.#c.use(() => this.#commit(queue, refused));
    } catch (error) {
      for (const q of queue) q.reject(error);
      return;
    }
    if (this.onCommit) {
      let bytes = PAGE_ESTIMATE * (2 + queue.length);
      for (const q of queue) for (const e of q.events) bytes += e.bytes ?? e.payload.length;
      this.onCommit(bytes);
    }
    for (let i = 0; i < queue.length; i++) {
      const q = queue[i] as Queued;
      if (i in refused) {
        q.reject(refused[i]);
        continue;
      }
      const last = q.events[q.events.length - 1];
      if (last) this.#bus.notify(q.session, q.stream, last.seq, false);
      q.resolve();
    }
  }

  /** Every check that can refuse the append, before anything is written. Throws to refuse. */
  #plan(q: Queued): Planned {
    // The lease table is this process's (the file is single-process), so checking it inside
    // the synchronous transaction makes the check and the write one step.
    this.#owners.check(q.session, q.fence);
    const row = this.#c.st.getAppendHead.get(q.session, q.stream);
    if (!row) throw new ContinuityError('store-conflict', `Stream ${q.stream} does not exist`);
    // The rule reads only `closed` and `lastSeq`: no need to parse the rest of the head.
    checkContiguous({ lastSeq: row.last_seq, closed: row.closed !== 0 } as StreamHead, q.events);
    const last = q.events[q.events.length - 1];
    return {
      session: q.session,
      stream: q.stream,
      window: { firstSeq: row.first_seq, baseChain: row.base_chain, lastSeq: row.last_seq, bytes: row.bytes },
      lastSeq: last ? last.seq : row.last_seq,
      lastChain: last ? last.chain : row.last_chain,
      batch: last ? packBatch(q.events) : undefined,
    };
  }

  #write({ session, stream, window, lastSeq, lastChain, batch }: Planned): void {
    if (!batch) return;
    const { st } = this.#c;
    st.insertBatch.run(session, stream, window.lastSeq + 1, lastSeq, batch.bytes, batch.ats, batch.sizes, batch.chains, batch.payloads);
    window.lastSeq = lastSeq;
    window.bytes += batch.bytes;
    const oldFirst = window.firstSeq;
    this.#trim(session, stream, window);
    if (window.firstSeq > oldFirst) st.trimBatches.run(session, stream, window.firstSeq);
    st.updateHead.run(window.firstSeq, window.baseChain, window.lastSeq, lastChain, window.bytes, session, stream);
  }

  /**
   * Moves the window's low end past the oldest events while the stream breaks a retention
   * limit (the rule of memory.ts: drop the oldest until count, bytes and the oldest event's
   * age all fit), reading rows oldest first.
   */
  #trim(session: string, stream: string, w: Window): void {
    const { maxEvents, maxBytes, maxAgeMs } = this.#retention;
    const aged = Number.isFinite(maxAgeMs);
    if (!aged && w.lastSeq - w.firstSeq + 1 <= maxEvents && w.bytes <= maxBytes) return;
    const cutoff = aged ? this.#now() - maxAgeMs : -Infinity;
    /** Events below this seq go whatever their size and age. */
    const countCut = w.lastSeq - maxEvents + 1;
    let cut: BatchRow | undefined;
    for (const row of this.#c.st.scanOldest.iterate(session, stream, w.firstSeq)) {
      if (row.last_seq < countCut && row.first_seq >= w.firstSeq) {
        w.bytes -= row.bytes;
        w.firstSeq = row.last_seq + 1;
        cut = row;
        continue;
      }
      const meta: BatchMeta = batchMeta(row);
      let keep = false;
      for (let seq = w.firstSeq; seq <= row.last_seq; seq++) {
        const i = seq - row.first_seq;
        if (seq >= countCut && w.bytes <= maxBytes && atOf(meta, i) >= cutoff) {
          keep = true;
          break;
        }
        w.bytes -= meta.sizes[i] as number;
        w.firstSeq = seq + 1;
        cut = row;
      }
      if (keep) break;
    }
    if (cut) w.baseChain = chainOf(cut, w.firstSeq - 1);
  }
}
