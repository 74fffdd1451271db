/**
 * What all SSE readers of the process hold together. Each reader is bounded on its own,
 * but their number is the clients' to choose (sessions × requests in flight), so the bytes
 * queued for them are also counted together, process-wide since memory is: two endpoints
 * sharing one `ProcessState` (`./process.ts`) share the count, each checking it against its own bound.
 */

/** Default bound on the bytes queued for all readers together (256 MiB). */
export const DEFAULT_MAX_BUFFERED_BYTES_TOTAL = 256 * 1024 * 1024;

/** Default time a reader with bytes queued may go without once emptying its queue (60 s). */
export const DEFAULT_READER_STALL_MS = 60_000;

/** What the readers sharing one budget hold together, as each last counted its own queue. */
export class ReaderBudget {
  #total = 0;

  /** Bytes queued for all readers counted here (as last counted: on writes, drains and ends). */
  get total(): number {
    return this.#total;
  }

  /** A new reader's share, counted here. */
  share(): ReaderShare {
    return new ReaderShare(this);
  }

  /** Moves the total by `delta` (a share's change). */
  add(delta: number): void {
    this.#total += delta;
  }
}

/** One reader's share of its budget's count. */
export class ReaderShare {
  readonly #budget: ReaderBudget;
  #counted = 0;

  constructor(budget: ReaderBudget) {
    this.#budget = budget;
  }

  /** The reader's queue is now `queued` bytes. */
  count(queued: number): void {
    this.#budget.add(queued - this.#counted);
    this.#counted = queued;
  }

  /** The reader is gone: it no longer counts. */
  release(): void {
    this.count(0);
  }

  /** What all readers would hold with this one's queue at `queued` bytes. */
  totalWith(queued: number): number {
    return this.#budget.total - this.#counted + queued;
  }
}
