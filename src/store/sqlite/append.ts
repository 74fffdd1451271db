/**
 * The SQLite log's write path: group commit, one row per append, retention.
 *
 * Group commit: appends made in one synchronous stretch (the server flushes every stream
 * of a turn in one loop, the server's stream turns) are committed together, in one
 * `BEGIN IMMEDIATE` transaction, on the next microtask. A commit costs pages that every
 * append touches (the stream heads', the index's, the newest rows'), written to the WAL
 * once per commit instead of once per stream. Each append still succeeds or fails alone:
 * everything that can refuse an append (ownership, a missing or closed stream, a gap) is
 * checked before it writes (the head's check is the conditional UPDATE that claims it),
 * so a refused append is left out and the others commit. A
 * failure while writing (disk full, I/O) rolls back the whole transaction and fails every
 * append in it; none is in the log. Every other use of the connection commits what is
 * queued first, so operations take effect in the order they were called.
 *
 * Retention runs in the transaction of the append that triggers it, on whole rows where
 * it can: a row wholly below the count limit goes by its byte total, and only the row the
 * cut lands in is decoded. Rows partly below the low watermark stay until all of their
 * events are trimmed.
 */
import { isSqliteError } from './driver.js';
import { ContinuityError } from '../../protocol/errors.js';
import type { LocalBus, LocalOwnership } from '../local-cluster.js';
import { checkContiguous } from '../rules.js';
import { atOf, batchMeta, chainOf, packBatch, type BatchColumns, type BatchMeta, type BatchRow } from './batches.js';
import type { Connection } from './statements.js';
import type { SqliteBudget } from './budget.js';
import type { LogEvent, ResolvedRetention, StreamHead } from '../types.js';

/** How soon a commit held off by the checkpointer is tried again, ms. */
const HOLD_RETRY_MS = 1;
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

/** An append that passed every check and claimed its stream's head. */
interface Planned {
  session: string;
  stream: string;
  /** The stream's window after the claim; undefined for an empty append (nothing to write). */
  window: Window | undefined;
  /** Seq of the batch's first event. */
  firstSeq: number;
  batch: BatchColumns | undefined;
}

/** The part of a stream's head that retention moves. */
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
  readonly #budget: SqliteBudget;
  readonly #commit: (queue: readonly Queued[], refused: unknown[]) => void;
  #queue: Queued[] = [];
  /** Told the bytes each commit wrote (payloads plus an estimate of the pages around them). */
  onCommit: ((bytes: number) => void) | undefined;
  /** True while commits should wait a moment (the checkpointer is rewinding the WAL). */
  holdOff: (() => boolean) | undefined;
  #retry: ReturnType<typeof setTimeout> | undefined;

  constructor(c: Connection, retention: ResolvedRetention, now: () => number, owners: LocalOwnership, bus: LocalBus, budget: SqliteBudget) {
    this.#c = c;
    this.#retention = retention;
    this.#now = now;
    this.#owners = owners;
    this.#bus = bus;
    this.#budget = budget;
    const tx = c.db.transaction((queue: readonly Queued[], refused: unknown[]) => {
      for (let i = 0; i < queue.length; i++) {
        let plan: Planned;
        try {
          plan = this.#plan(queue[i] as Queued);
        } catch (error) {
          // A failing database fails the whole transaction; anything else refuses this append.
          if (isSqliteError(error)) throw error;
          refused[i] = error;
          continue;
        }
        this.#write(plan);
      }
      this.#budget.enforce(c.st);
    });
    this.#commit = (queue, refused) => tx.immediate(queue, refused);
  }

  /** Queues an append; it commits on the next microtask (or sooner, see {@link flush}). */
  append(session: string, stream: string, events: readonly LogEvent[], fence: number | undefined): Promise<void> {
    this.#c.check();
    return new Promise((resolve, reject) => {
      if (this.#queue.push({ session, stream, events, fence, resolve, reject }) === 1) queueMicrotask(() => this.#flushSoon());
    });
  }

  /**
   * The group's commit, unless it should wait: then it is tried again shortly, while the
   * event loop runs on (committing now would block the loop on the checkpointer's lock).
   */
  #flushSoon(): void {
    if (this.holdOff?.()) {
      this.#retry ??= setTimeout(() => {
        this.#retry = undefined;
        this.#flushSoon();
      }, HOLD_RETRY_MS);
      return;
    }
    this.flush();
  }

  /** Commits every queued append now, in one transaction, then settles their promises. */
  flush(): void {
    if (this.#retry) {
      clearTimeout(this.#retry);
      this.#retry = undefined;
    }
    const queue = this.#queue;
    if (queue.length === 0) return;
    this.#queue = [];
    const refused = new Array<unknown>(queue.length);
    try {
      this.#c.use(() => this.#commit(queue, refused));
    } catch (error) {
      // Rolled back: what the budget was told this commit added is not there.
      this.#budget.dropped();
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
      if (last) this.#bus.notifyAppend(q.session, q.stream, last.seq);
      q.resolve();
    }
  }

  /**
   * Every check that can refuse the append, then the claim: one conditional UPDATE moves
   * the stream's head to the batch's last event if the stream exists, is open and ends
   * where the batch begins (the check and the write in one statement, where a read and
   * a write were two). Throws to refuse; the claim is the last step, so a refused append
   * has written nothing.
   */
  #plan(q: Queued): Planned {
    const { st } = this.#c;
    // The lease table is this process's (the file is single-process), so checking it inside
    // the synchronous transaction makes the check and the write one step.
    this.#owners.check(q.session, q.fence);
    const { events } = q;
    const first = events[0];
    const last = events[events.length - 1];
    if (first && last && isContiguous(events)) {
      const batch = packBatch(events);
      const row = st.claimHead.get(last.seq, last.chain, batch.bytes, q.session, q.stream, first.seq - 1);
      if (row) {
        const window = { firstSeq: row.first_seq, baseChain: row.base_chain, lastSeq: last.seq, bytes: row.bytes };
        return { session: q.session, stream: q.stream, window, firstSeq: first.seq, batch };
      }
    }
    // Refused (or empty): the head says why, in the words every store uses.
    const row = st.getAppendHead.get(q.session, q.stream);
    if (!row) throw new ContinuityError('store-conflict', `Stream ${q.stream} does not exist`);
    // The rule reads only `closed` and `lastSeq`: no need to parse the rest of the head.
    checkContiguous({ lastSeq: row.last_seq, closed: row.closed !== 0 } as StreamHead, events);
    // Not reached: a claim fails only for a reason the rule above names.
    if (last) throw new ContinuityError('store-conflict', `Stream ${q.stream} refused the append`);
    return { session: q.session, stream: q.stream, window: undefined, firstSeq: row.last_seq + 1, batch: undefined };
  }

  /** Writes a claimed batch and trims what retention no longer keeps. */
  #write({ session, stream, window, firstSeq, batch }: Planned): void {
    if (!batch || !window) return;
    const { st } = this.#c;
    st.insertBatch.run(session, stream, firstSeq, window.lastSeq, batch.bytes, batch.ats, batch.sizes, batch.chains, batch.payloads);
    const oldFirst = window.firstSeq;
    const oldBytes = window.bytes;
    this.#trim(session, stream, window);
    if (window.firstSeq > oldFirst) st.trimBatches.run(session, stream, window.firstSeq);
    if (window.firstSeq !== oldFirst || window.bytes !== oldBytes) {
      st.updateWindow.run(window.firstSeq, window.baseChain, window.bytes, session, stream);
    }
    // The stream holds the batch, less what retention trimmed.
    this.#budget.changed(batch.bytes - (oldBytes - window.bytes));
  }

  /**
   * Moves the window's low end past the oldest events while the stream breaks a retention
   * limit (the memory store's rule, in `../memory/index.ts`: drop the oldest until count, bytes and the oldest event's
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

/** Each event's seq is the one before it plus one. */
function isContiguous(events: readonly LogEvent[]): boolean {
  const first = (events[0] as LogEvent).seq;
  for (let i = 1; i < events.length; i++) if ((events[i] as LogEvent).seq !== first + i) return false;
  return true;
}
