/**
 * The one bounding policy of every reader (SSE response or WebSocket): its own byte bound,
 * its share of what all readers of the process hold, and the time it may go without once
 * emptying its queue. A sink asks before each write; past a bound it cuts its reader
 * (nothing is lost: everything written was logged first, and the client resumes from it).
 */
import { DEFAULT_MAX_BUFFERED_BYTES_TOTAL, DEFAULT_READER_STALL_MS, type ReaderBudget, type ReaderShare } from './reader-budget.js';
import { defaultProcess, type ProcessState } from './process.js';
import type { ResolvedLimits } from './limits.js';

/** What one reader may hold: alone, with every other reader, and for how long. */
export interface ReaderBounds {
  maxBufferedBytes: number;
  /**
   * Bytes queued for all readers of the process together before a reader that is behind is
   * cut (default {@link DEFAULT_MAX_BUFFERED_BYTES_TOTAL}): the per-reader bound alone
   * multiplies by the number of readers, which clients choose. A reader keeping up is never
   * cut by it.
   */
  maxBufferedBytesTotal?: number | undefined;
  /**
   * A reader with bytes queued that empties its queue not once in this long, ms, is cut
   * (default {@link DEFAULT_READER_STALL_MS}). Without it a client that stops reading pins
   * what was queued for it for as long as its connection lives.
   */
  stallMs?: number | undefined;
  /** Where this reader's queue is counted with the others' (default: `defaultProcess.readers`). */
  readers?: ReaderBudget | undefined;
}

/** The bounds an endpoint's limits give each of its readers, counted in `process`. */
export function readerBounds(limits: ResolvedLimits, process: ProcessState): Required<ReaderBounds> {
  return {
    maxBufferedBytes: limits.maxBufferedBytes,
    maxBufferedBytesTotal: limits.maxBufferedBytesTotal,
    stallMs: limits.readerStallMs,
    readers: process.readers,
  };
}

export class BoundedWriter {
  readonly #max: number;
  readonly #maxTotal: number;
  readonly #stallMs: number;
  /** Below this many queued bytes the reader counts as having caught up (paced writers go on). */
  readonly #lowWater: number;
  readonly #share: ReaderShare;
  /** When the queue was last empty (or caught up). */
  #emptyAt = performance.now();
  #waiters: Array<() => void> = [];

  constructor(bounds: ReaderBounds, lowWater: number) {
    this.#max = bounds.maxBufferedBytes;
    this.#maxTotal = bounds.maxBufferedBytesTotal ?? DEFAULT_MAX_BUFFERED_BYTES_TOTAL;
    this.#stallMs = bounds.stallMs ?? DEFAULT_READER_STALL_MS;
    this.#lowWater = lowWater;
    this.#share = (bounds.readers ?? defaultProcess.readers).share();
  }

  /**
   * May a reader with `queued` bytes behind take `adding` more? One write into an empty
   * queue always goes, so an event larger than the bound still reaches a reader that keeps
   * up. Checked on every write, keep-alives included, so a stalled reader is cut within a
   * keep-alive interval.
   */
  admits(queued: number, adding: number): boolean {
    if (queued === 0) {
      this.#emptyAt = performance.now();
      return true;
    }
    return queued + adding <= this.#max && this.#share.totalWith(queued + adding) <= this.#maxTotal && performance.now() - this.#emptyAt <= this.#stallMs;
  }

  /** The reader's queue is now `queued` bytes. */
  count(queued: number): void {
    this.#share.count(queued);
  }

  /** The reader took bytes and `queued` are left: counted, and paced writers woken once low. */
  progressed(queued: number): void {
    this.#share.count(queued);
    if (queued > this.#lowWater) return;
    this.#emptyAt = performance.now();
    this.wake();
  }

  /** Resolves once the reader has caught up (below the low-water mark), or at once if `ended`. */
  drained(queued: number, ended: boolean): Promise<void> {
    if (ended || queued <= this.#lowWater) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** How much longer a queue left at the end may linger before its connection is closed, ms. */
  lingerMs(): number {
    return Math.max(0, this.#stallMs - (performance.now() - this.#emptyAt));
  }

  /** Wakes every paced writer (the reader caught up, or ended). */
  wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w();
  }

  /** The reader is gone: it no longer counts, and nobody waits for it. */
  release(): void {
    this.#share.release();
    this.wake();
  }
}
