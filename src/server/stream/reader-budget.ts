/**
 * What all SSE readers of the process hold together. Each reader is bounded on its own,
 * but their number is the clients' to choose (sessions × requests in flight), so the bytes
 * queued for them are also counted together, process-wide since memory is: two endpoints
 * in one process share the count, each checking it against its own bound.
 */
import { observeBufferedBytes } from '../../telemetry/meter.js';

/** Default bound on the bytes queued for all readers together (256 MiB). */
export const DEFAULT_MAX_BUFFERED_BYTES_TOTAL = 256 * 1024 * 1024;

/** Default time a reader with bytes queued may go without once emptying its queue (60 s). */
export const DEFAULT_READER_STALL_MS = 60_000;

/** Bytes queued for readers, as each last counted its own queue (on writes, drains and its end). */
let total = 0;

/** Bytes queued for all SSE readers of this process (as last counted). */
export function queuedForReaders(): number {
  return total;
}
observeBufferedBytes(queuedForReaders);

/** One reader's share of the process's count. */
export class ReaderShare {
  #counted = 0;

  /** The reader's queue is now `queued` bytes. */
  count(queued: number): void {
    total += queued - this.#counted;
    this.#counted = queued;
  }

  /** The reader is gone: it no longer counts. */
  release(): void {
    this.count(0);
  }

  /** What all readers would hold with this one's queue at `queued` bytes. */
  totalWith(queued: number): number {
    return total - this.#counted + queued;
  }
}
