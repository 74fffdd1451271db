/**
 * The reader attached to one outbound stream: which sink, how far it has been written,
 * whether it is still being caught up from the log, and whether it stalled. The stream
 * decides what is in the log; this decides what of it a reader gets, and when.
 */
import type { LogEvent } from '../../store/types.js';
import type { EventSink } from './event-sink.js';
import type { ReplayPages } from './replay.js';

/**
 * How long a producer waits for a live reader that is behind (its response buffer is full)
 * before going on without it. Pacing a producer to its reader keeps a fast tool from
 * outrunning the reader's buffer and then the log's retention. A reader that does not
 * catch up within this bound is stalled: producers stop waiting for it until it drains
 * (meanwhile it is cut at its buffer limit, and resumes from the log).
 */
export const READER_WAIT_MS = 1_000;

/** An event on its way to a reader, with the `retry:` to send along (priming events). */
export interface SinkEntry {
  readonly event: LogEvent;
  readonly retry: number | undefined;
}

/** What a catch-up needs of its stream, read again after every page (the stream moves on). */
export interface CatchUpSource {
  readonly pages: ReplayPages;
  /** The highest seq in the log now. */
  persistedSeq(): number;
  /** Has the stream closed in the log? */
  complete(): boolean;
}

export class StreamReader {
  /** `<epoch>.<stream>.`: validated once, so event IDs need no re-validation per event. */
  readonly #idPrefix: string;
  #sink: EventSink | undefined;
  /** Highest seq written to the attached sink. */
  #sinkSeq = 0;
  /** The attached sink is still being replayed to; live writes wait for the replay loop. */
  #catchingUp = false;
  /** Highest seq ever written to any sink: where a GET without a cursor starts. */
  #deliveredSeq: number;
  /** A reader that did not catch up within the bound: not waited for until it drains. */
  #stalled: EventSink | undefined;
  /** A wait for a lagging reader in progress, shared by the appends that meet it. */
  #wait: Promise<void> | undefined;

  constructor(idPrefix: string, deliveredSeq = 0) {
    this.#idPrefix = idPrefix;
    this.#deliveredSeq = deliveredSeq;
  }

  get deliveredSeq(): number {
    return this.#deliveredSeq;
  }

  get attached(): boolean {
    return this.#sink !== undefined && !this.#sink.ended;
  }

  /**
   * Attaches `sink`, which has seen everything up to `afterSeq`: replays the rest from the
   * log in pages, then leaves it to live delivery. A previous reader is taken over. Never
   * rejects: a failed replay closes `sink`.
   */
  async attach(sink: EventSink, afterSeq: number, source: CatchUpSource): Promise<void> {
    // Taken over: a lagging old reader's queued bytes are dropped now, not when its socket drains.
    if (this.#sink && this.#sink !== sink) this.#sink.takenOver();
    this.#sink = sink;
    this.#sinkSeq = afterSeq;
    this.#catchingUp = true;
    try {
      while (this.#sinkSeq < source.persistedSeq()) {
        const events = await source.pages.next(this.#sinkSeq);
        if (this.#sink !== sink || sink.ended) return;
        const first = events[0];
        if (!first || first.seq !== this.#sinkSeq + 1) {
          // Trimmed while replaying: end the response; the client's resume will be
          // refused with replay-window-exceeded rather than given a gap.
          sink.close();
          return;
        }
        this.#write(
          sink,
          events.map((event) => ({ event, retry: undefined })),
        );
        await sink.drained();
      }
    } catch {
      // The store failed the replay (unreachable, say): end this response, and the client
      // resumes from what it has. Callers start a reader without awaiting it, so nothing
      // here may reject: an unhandled rejection would end the process.
      sink.close();
      return;
    } finally {
      if (this.#sink === sink) this.#catchingUp = false;
    }
    if (source.complete()) sink.close();
  }

  /** Events just stored: to the reader, if one is attached and caught up. */
  live(entries: readonly SinkEntry[]): void {
    const sink = this.#sink;
    if (sink && !this.#catchingUp && !sink.ended) this.#write(sink, entries);
  }

  /**
   * A wait for the live reader while it is behind, bounded by {@link READER_WAIT_MS};
   * `undefined` when there is none to wait for (none attached, catching up, or stalled).
   */
  paced(): Promise<void> | undefined {
    const sink = this.#sink;
    if (!sink || sink.ended || this.#catchingUp || this.#stalled === sink) return undefined;
    this.#wait ??= this.#waitFor(sink).finally(() => {
      this.#wait = undefined;
    });
    return this.#wait;
  }

  /** The stream completed: a caught-up reader ends now (one catching up ends after its replay). */
  completed(): void {
    if (this.#sink && !this.#catchingUp) this.#sink.close();
  }

  /** Ends the attached response without ending the stream (SEP-1699 polling). */
  close(retryMs: number | undefined): void {
    const sink = this.#sink;
    if (!sink) return;
    if (retryMs !== undefined) sink.retry(retryMs);
    sink.close();
  }

  /** Ends the attached response and forgets it. */
  detach(): void {
    this.#sink?.close();
    this.#sink = undefined;
  }

  /** Resolves when `sink` wants more data, or after {@link READER_WAIT_MS} (it is then stalled). */
  async #waitFor(sink: EventSink): Promise<void> {
    const drained = sink.drained();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const bound = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), READER_WAIT_MS);
    });
    const caughtUp = await Promise.race([drained.then(() => true), bound]);
    clearTimeout(timer);
    if (caughtUp) return;
    this.#stalled = sink;
    void drained.then(() => {
      if (this.#stalled === sink) this.#stalled = undefined;
    });
  }

  #write(sink: EventSink, entries: readonly SinkEntry[]): void {
    const out: Array<{ id: string; data: string; retry: number | undefined }> = [];
    for (const { event, retry } of entries) {
      if (event.seq <= this.#sinkSeq) continue;
      // Epoch and name were validated when the prefix was made; seq and chain are ours.
      out.push({ id: `${this.#idPrefix}${event.seq}.${event.chain}`, data: event.payload, retry });
      this.#sinkSeq = event.seq;
    }
    if (out.length === 0) return;
    if (sink.write(out) && this.#sinkSeq > this.#deliveredSeq) this.#deliveredSeq = this.#sinkSeq;
  }
}
