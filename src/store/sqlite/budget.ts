/**
 * The SQLite store's bound on what all its streams hold together (`maxTotalBytes`).
 *
 * Per-stream retention alone does not bound the file: a session keeps up to
 * `limits.maxStreamsPerSession` streams, and a tool that answers each call with a few MiB
 * would let one client fill the disk with completed streams. Past the budget the oldest
 * batches in the store go first, whichever stream holds them (a resume from them is then
 * refused with `replay-window-exceeded`, like any other trim). Batch ids grow with each
 * insert and a stream's rows are trimmed oldest first, so the row with the lowest id is
 * the oldest event held anywhere. Whole rows go: the store may end up to one batch under
 * the budget.
 *
 * What the streams hold is tracked as the appends and trims of this process change it,
 * and counted afresh (a sum over the streams) only after a drop, which this count does not
 * follow. One process owns the file, so nothing else changes it.
 */
import { chainOf, type OldestBatchRow } from './batches.js';
import type { Statements } from './statements.js';

/** Oldest rows read per query while trimming. */
const PAGE = 64;

export class SqliteBudget {
  /** Payload bytes (UTF-8) all streams may hold together. */
  readonly maxBytes: number;
  /** Payload bytes held, once counted; exact unless {@link #stale}. */
  #held: number | undefined;
  #stale = false;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  /** An append changed what one stream holds by `bytes` (the batch, less what retention trimmed). */
  changed(bytes: number): void {
    if (this.#held !== undefined) this.#held += bytes;
  }

  /** Streams or sessions were dropped: count again before trimming. */
  dropped(): void {
    this.#stale = true;
  }

  /** Inside a write transaction: trims the oldest batches in the store while it holds more than the budget. */
  enforce(st: Statements): void {
    if (this.#held === undefined || this.#stale) {
      this.#held = st.sumBytes.get() ?? 0;
      this.#stale = false;
    }
    while (this.#held > this.maxBytes) {
      const rows = st.oldestBatches.all(PAGE);
      if (rows.length === 0) return;
      for (const row of rows) {
        if (this.#held <= this.maxBytes) return;
        this.#held -= trimRow(st, row);
      }
    }
  }
}

/** Deletes the oldest row of its stream and moves the stream's window past it; returns the bytes that left. */
function trimRow(st: Statements, row: OldestBatchRow): number {
  const window = st.getWindow.get(row.session, row.stream);
  st.deleteBatch.run(row.id);
  if (!window || window.first_seq > row.last_seq) return 0;
  let released = row.bytes;
  if (window.first_seq > row.first_seq) {
    // Partly trimmed already: only its events from the window's start are still counted.
    const sizes = JSON.parse(row.sizes) as number[];
    released = 0;
    for (let i = window.first_seq - row.first_seq; i < sizes.length; i++) released += sizes[i] as number;
  }
  st.updateWindow.run(row.last_seq + 1, chainOf(row, row.last_seq), window.bytes - released, row.session, row.stream);
  return released;
}
