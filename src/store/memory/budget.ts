/**
 * The memory store's bound on what all its streams hold together.
 *
 * Per-stream retention alone does not bound a process: a session keeps up to
 * `limits.maxStreamsPerSession` streams, a process up to `limits.maxSessions` sessions,
 * and a tool that answers each call with a few MiB lets one client fill the heap with
 * completed streams until the process dies. Past the store's budget the oldest events go
 * first, whichever stream holds them (a resume from them is then refused with
 * `replay-window-exceeded`, like any other trim).
 *
 * The budget keeps the store's runs (by stream and seq, never the runs themselves) in the
 * order they were appended. Within a stream,
 * runs are trimmed oldest first, so the oldest run still held anywhere is the first live
 * entry of that order. Entries of runs that left otherwise (per-stream retention, a
 * dropped stream) are skipped when they reach the front, and swept out once they are
 * most of the order, so the order stays proportional to what is held.
 */
import type { Run } from './runs.js';

/** What the budget reads of a stream. */
export interface BudgetedStream {
  /** The stream was dropped: none of its runs is held (and it holds none). */
  dropped: boolean;
  /** Seq of the oldest event held. */
  readonly head: { readonly firstSeq: number };
}

/** A run by its stream and the seq after its last event: the order holds no run (nor payload) itself. */
interface Entry {
  readonly stream: BudgetedStream;
  readonly end: number;
}

function held(e: Entry): boolean {
  return !e.stream.dropped && e.end > e.stream.head.firstSeq;
}

/** Sweeping waits for at least this many entries of runs no longer held. */
const SWEEP_FROM = 1024;

export class StoreBudget {
  /** Payload bytes (UTF-8) all streams may hold together. */
  readonly maxBytes: number;
  #bytes = 0;
  #order: Array<Entry | undefined> = [];
  #start = 0;
  /** Entries of runs no longer held, still in the order. */
  #stale = 0;

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  /** Payload bytes held now. */
  get bytes(): number {
    return this.#bytes;
  }

  get over(): boolean {
    return this.#bytes > this.maxBytes;
  }

  /** `stream` appended `runs`, with `bytes` of payload. */
  added(stream: BudgetedStream, runs: readonly Run[], bytes: number): void {
    this.#bytes += bytes;
    for (const run of runs) this.#order.push({ stream, end: run.firstSeq + run.count });
  }

  /** `bytes` of payload left the store, and with them `runs` whole runs. */
  released(bytes: number, runs: number): void {
    this.#bytes -= bytes;
    this.#stale += runs;
    if (this.#stale >= SWEEP_FROM && this.#stale * 2 > this.#order.length - this.#start) this.#sweep();
  }

  /** The stream that holds the oldest event in the store. */
  oldest(): BudgetedStream | undefined {
    while (this.#start < this.#order.length) {
      const entry = this.#order[this.#start] as Entry;
      if (held(entry)) return entry.stream;
      this.#order[this.#start++] = undefined;
      this.#stale--;
    }
    return undefined;
  }

  #sweep(): void {
    const live: Entry[] = [];
    for (let i = this.#start; i < this.#order.length; i++) {
      const entry = this.#order[i] as Entry;
      if (held(entry)) live.push(entry);
    }
    this.#order = live;
    this.#start = 0;
    this.#stale = 0;
  }
}
