/**
 * One logical outbound stream of a session (the standalone GET stream, or the stream that
 * answers one POST). It numbers and chains events, writes them to the log first, and only
 * then to whichever SSE response is attached, so a message produced while the client is
 * away waits in the log. Appends are group-committed: events queued while one store write
 * is in flight go out together in the next.
 *
 * Latency bound: a producer that awaits each append would otherwise run on microtasks
 * alone, holding the event loop (and every other session's socket) until the backlog
 * limit. After {@link TURN_BYTES} of appends to one stream, or once all producers together
 * have spent the turn's time budget (`./turns.ts`), `append` resolves only on the next
 * turn instead, so a batch closes small and leaves at once.
 */
import { ContinuityError } from '../../protocol/errors.js';
import { chainSeed, eventIdPrefix } from '../../protocol/event-id.js';
import { hashNextChain, utf8Length } from '../../protocol/chain-hash.js';
import { atNextTurn, nextTurn, turnBudgetSpent } from './turns.js';
import type { LogEvent, StreamHead, StreamInfo } from '../../store/types.js';
import type { EventSink } from './event-sink.js';
import { ReplayPages } from './replay.js';
import type { StreamHost } from './host.js';

export type { StreamHost } from './host.js';


interface Pending {
  /** Carries its UTF-8 byte count (`bytes`), counted once, for the store and retention. */
  event: LogEvent & { readonly bytes: number };
  /** `retry:` to send with this event when written live (priming events). */
  retry: number | undefined;
}

/** Options of {@link OutboundStream.append}. */
export interface AppendOptions {
  /** `retry:` to send with this event when written live (priming events). */
  retry?: number | undefined;
  /** Resolve only once this event is in the log. */
  durable?: boolean | undefined;
}

/** What {@link OutboundStream.append} returns while the backlog is small: one shared, settled promise. */
const ACCEPTED: Promise<void> = Promise.resolve();

/**
 * Unpersisted payload bytes (UTF-8) a stream accepts before `append` makes its caller
 * wait. Below it, an append resolves without waiting for the store and the next store
 * write carries many events (group commit); above it, the producer is slowed to the
 * store's pace. Either way nothing reaches a socket before it is in the log.
 */
const HIGH_WATER_BYTES = 1024 * 1024;
/**
 * Payload bytes appended to one stream in one event-loop turn before `append` resolves on
 * the next turn. This is what closes a batch: the flush queued on the first append of the
 * turn runs before the producer resumes.
 */
export const TURN_BYTES = 32 * 1024;
/**
 * How long a producer waits for a live reader that is behind (its response buffer is full)
 * before going on without it. Pacing a producer to its reader keeps a fast tool from
 * outrunning the reader's buffer and then the log's retention. A reader that does not
 * catch up within this bound is stalled: producers stop waiting for it until it drains
 * (meanwhile it is cut at its buffer limit, and resumes from the log).
 */
export const READER_WAIT_MS = 1_000;
interface Waiter {
  seq: number;
  durable: boolean;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** Store write attempts for one batch before the session is given up (see #flush). */
const STORE_ATTEMPTS = [0, 20, 200];

export class OutboundStream {
  readonly name: string;
  readonly kind: StreamInfo['kind'];
  readonly #host: StreamHost;
  /** Request keys (JSON of the id) this stream still owes a response. */
  readonly #open: Set<string>;
  /** `<epoch>.<stream>.`: IDs this stream makes need no re-validation per event. */
  readonly #idPrefix: string;
  #lastSeq: number;
  #lastChain: string;
  #persistedSeq: number;
  #pending: Pending[] = [];
  /** Bytes appended and not yet in the log (what the high-water mark limits). */
  #pendingBytes = 0;
  /** Bytes appended since this stream's last flush or yield. */
  #turnBytes = 0;
  /** A wait for a lagging reader in progress, shared by the appends that meet it. */
  #readerWait: Promise<void> | undefined;
  /** A reader that did not catch up within the bound: not waited for until it drains. */
  #stalledSink: EventSink | undefined;
  /** Callers waiting for the backlog to drain below the high-water mark, or for durability. */
  #waiters: Waiter[] = [];
  #broken: unknown;
  #flushScheduled = false;
  /** Replaced by a new stream (log reset): its remaining writes no longer matter. */
  #retired = false;
  #flushing = false;
  #completing = false;
  #complete = false;
  #sink: EventSink | undefined;
  /** Highest seq written to the attached sink. */
  #sinkSeq = 0;
  /** The attached sink is still being replayed to; live writes wait for the replay loop. */
  #catchingUp = false;
  /** Highest seq ever written to any sink: where a GET without a cursor starts. */
  #deliveredSeq = 0;

  private constructor(host: StreamHost, name: string, info: StreamInfo, lastSeq: number, lastChain: string) {
    this.#host = host;
    this.name = name;
    this.kind = info.kind;
    this.#open = new Set(info.requestIds);
    this.#idPrefix = eventIdPrefix(host.epoch, name);
    this.#lastSeq = lastSeq;
    this.#lastChain = lastChain;
    this.#persistedSeq = lastSeq;
  }

  /** Creates the stream in the log and returns it. */
  static async open(host: StreamHost, name: string, info: StreamInfo): Promise<OutboundStream> {
    const seed = chainSeed(host.epoch, name);
    await host.log.openStream(host.sessionId, name, seed, info, host.fence);
    return new OutboundStream(host, name, info, 0, seed);
  }

  /**
   * Rebuilds a stream an earlier process wrote, continuing its numbering and chain.
   * `info.requestIds` are the requests it still owes; a reader attaching later without a
   * cursor starts after everything stored (the old process may have delivered it).
   */
  static restore(host: StreamHost, name: string, head: StreamHead, info: StreamInfo): OutboundStream {
    const stream = new OutboundStream(host, name, info, head.lastSeq, head.lastChain);
    stream.#deliveredSeq = head.lastSeq;
    return stream;
  }

  /** Completes a request stream that owes nothing (its process died after the last response). */
  settle(): void {
    if (this.kind === 'request' && this.#open.size === 0 && !this.#completing) {
      this.#completing = true;
      this.#scheduleFlush();
    }
  }

  get deliveredSeq(): number {
    return this.#deliveredSeq;
  }
  /** The last seq numbered (appended, not necessarily in the log yet). */
  get lastSeq(): number {
    return this.#lastSeq;
  }
  get complete(): boolean {
    return this.#complete;
  }
  get hasReader(): boolean {
    return this.#sink !== undefined && !this.#sink.ended;
  }
  get openRequests(): ReadonlySet<string> {
    return this.#open;
  }

  /**
   * Numbers, chains and queues `payload` for the log. Resolves at once while the backlog
   * is small (on the next turn once this turn's appends reach the batch bound), otherwise
   * once the log has caught up; with `durable`, only once this event is in the log. It is
   * written to a reader only after it is in the log. `bytes` is the payload's UTF-8 length,
   * when the caller already counted it (it is counted once, then carried to the store).
   */
  append(payload: string, bytes: number = utf8Length(payload), options?: AppendOptions): Promise<void> {
    if (this.#broken !== undefined) return Promise.reject(this.#broken);
    if (this.#completing) return Promise.reject(new ContinuityError('stream-complete', undefined, { stream: this.name }));
    const seq = this.#lastSeq + 1;
    const chain = hashNextChain(this.#lastChain, payload);
    this.#lastSeq = seq;
    this.#lastChain = chain;
    const at = this.#host.now();
    this.#pending.push({ event: { seq, chain, payload, bytes, at }, retry: options?.retry });
    this.#pendingBytes += bytes;
    this.#turnBytes += bytes;
    this.#scheduleFlush();
    if (options?.durable === true || this.#pendingBytes > HIGH_WATER_BYTES) {
      const durable = options?.durable === true;
      return new Promise<void>((resolve, reject) => this.#waiters.push({ seq, durable, resolve, reject }));
    }
    const starved = turnBudgetSpent();
    if (!starved && this.#turnBytes < TURN_BYTES) return ACCEPTED;
    return this.#yieldTurn(starved);
  }

  /**
   * Resolves on a later turn than the flush already queued: the batch so far goes to the
   * store and the socket, and other I/O runs, before the producer adds more. A live reader
   * that is behind is waited for first (boundedly).
   */
  #yieldTurn(starved: boolean): Promise<void> {
    this.#turnBytes = 0;
    const sink = this.#sink;
    if (!sink || sink.ended || this.#catchingUp || this.#stalledSink === sink) return nextTurn(starved);
    this.#readerWait ??= this.#waitForReader(sink).finally(() => {
      this.#readerWait = undefined;
    });
    return this.#readerWait.then(() => nextTurn(starved));
  }

  /** Resolves when `sink` wants more data, or after {@link READER_WAIT_MS} (it is then stalled). */
  async #waitForReader(sink: EventSink): Promise<void> {
    const drained = sink.drained();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const bound = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), READER_WAIT_MS);
    });
    const caughtUp = await Promise.race([drained.then(() => true), bound]);
    clearTimeout(timer);
    if (caughtUp) return;
    this.#stalledSink = sink;
    void drained.then(() => {
      if (this.#stalledSink === sink) this.#stalledSink = undefined;
    });
  }

  /** A response for `key` was appended: once none is owed, the stream completes. */
  answered(key: string): void {
    this.#open.delete(key);
    this.settle();
  }

  /**
   * Attaches a reader that has seen everything up to `afterSeq`: replays the rest from the
   * log in pages, then switches it to live delivery. A previous reader is taken over (closed).
   */
  async attach(sink: EventSink, afterSeq: number): Promise<void> {
    // Taken over: a lagging old reader's queued bytes are dropped now, not when its socket drains.
    if (this.#sink && this.#sink !== sink) this.#sink.takenOver();
    this.#sink = sink;
    this.#sinkSeq = afterSeq;
    this.#catchingUp = true;
    const { log, sessionId, replayPageSize } = this.#host;
    const pages = new ReplayPages(log, sessionId, this.name, replayPageSize);
    try {
      while (this.#sinkSeq < this.#persistedSeq) {
        const events = await pages.next(this.#sinkSeq);
        if (this.#sink !== sink || sink.ended) return;
        const first = events[0];
        if (!first || first.seq !== this.#sinkSeq + 1) {
          // Trimmed while replaying: end the response; the client's resume will be
          // refused with replay-window-exceeded rather than given a gap.
          sink.close();
          return;
        }
        this.#writeToSink(sink, events.map((event) => ({ event, retry: undefined })));
        await sink.drained();
      }
    } finally {
      if (this.#sink === sink) this.#catchingUp = false;
    }
    if (this.#complete) sink.close();
  }

  /** Ends the attached response without ending the stream (SEP-1699 polling). */
  closeReader(retryMs: number | undefined): void {
    const sink = this.#sink;
    if (!sink) return;
    if (retryMs !== undefined) sink.retry(retryMs);
    sink.close();
  }

  /** This stream's log was dropped (a log reset): stop writing it, quietly. */
  retire(): void {
    this.#retired = true;
    this.#pending = [];
    this.#broken = new ContinuityError('replay-epoch-mismatch', 'The stream was retired by a log reset');
    for (const w of this.#waiters.splice(0)) w.resolve();
    this.detach();
  }

  /** Ends the attached response and forgets it (session terminated). */
  detach(): void {
    this.#sink?.close();
    this.#sink = undefined;
  }

  /**
   * Flushes on the next turn of the event loop, not the next microtask: a producer that
   * awaits each send (the SDK does) queues many events in between (up to the turn bound),
   * and they go to the store, and to the socket, together.
   */
  #scheduleFlush(): void {
    if (this.#flushing || this.#flushScheduled) return;
    this.#flushScheduled = true;
    atNextTurn(() => {
      this.#flushScheduled = false;
      // What was appended so far goes out now: the next batch starts empty.
      this.#turnBytes = 0;
      if (!this.#flushing) void this.#flush();
    });
  }

  async #flush(): Promise<void> {
    this.#flushing = true;
    try {
      while (this.#pending.length > 0) {
        const batch = this.#pending;
        this.#pending = [];
        try {
          await this.#store(batch);
        } catch (error) {
          if (this.#retired) return;
          // Events callers were told were accepted are not in the log, and numbering
          // cannot go on around them without a silent gap: the stream is broken, and the
          // session with it (its clients get 404 and re-initialize: loud, not lossy).
          this.#broken = new ContinuityError('store-unavailable', undefined, undefined, { cause: error });
          this.#pending = [];
          for (const w of this.#waiters.splice(0)) w.reject(this.#broken);
          this.#host.onStoreFailure(error);
          return;
        }
        const last = batch[batch.length - 1] as Pending;
        this.#persistedSeq = last.event.seq;
        for (const p of batch) this.#pendingBytes -= p.event.bytes;
        const sink = this.#sink;
        if (sink && !this.#catchingUp && !sink.ended) this.#writeToSink(sink, batch);
        this.#releaseWaiters();
      }
      if (this.#completing && !this.#complete) await this.#finish().catch((error: unknown) => this.#host.onStoreFailure(error));
    } finally {
      this.#flushing = false;
    }
  }

  /** Writes one batch, retrying briefly: a busy store is not yet a failed one. */
  async #store(batch: Pending[]): Promise<void> {
    const { log, sessionId, fence } = this.#host;
    const events = batch.map((p) => p.event);
    let failure: unknown;
    for (const delay of STORE_ATTEMPTS) {
      if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
      try {
        await log.append(sessionId, this.name, events, fence);
        return;
      } catch (error) {
        // A conflict will not heal by waiting: the log holds another history; a fenced
        // writer lost the session to another replica.
        if (error instanceof ContinuityError && (error.code === 'store-conflict' || error.code === 'store-fenced')) throw error;
        failure = error;
      }
    }
    throw failure;
  }

  #releaseWaiters(): void {
    if (this.#waiters.length === 0) return;
    const drained = this.#pendingBytes <= HIGH_WATER_BYTES;
    const keep: Waiter[] = [];
    for (const w of this.#waiters) {
      if (w.seq <= this.#persistedSeq || (drained && !w.durable)) w.resolve();
      else keep.push(w);
    }
    this.#waiters = keep;
  }

  async #finish(): Promise<void> {
    this.#complete = true;
    const { log, sessionId, fence } = this.#host;
    await log.closeStream(sessionId, this.name, fence);
    if (this.#sink && !this.#catchingUp) this.#sink.close();
    this.#host.onStreamComplete(this);
  }

  #writeToSink(sink: EventSink, entries: ReadonlyArray<{ event: LogEvent; retry: number | undefined }>): void {
    const out: Array<{ id: string; data: string; retry: number | undefined }> = [];
    for (const { event, retry } of entries) {
      if (event.seq <= this.#sinkSeq) continue;
      // Epoch and name were validated when the prefix was made; seq and chain are ours.
      const id = `${this.#idPrefix}${event.seq}.${event.chain}`;
      out.push({ id, data: event.payload, retry });
      this.#sinkSeq = event.seq;
    }
    if (out.length === 0) return;
    if (sink.write(out) && this.#sinkSeq > this.#deliveredSeq) this.#deliveredSeq = this.#sinkSeq;
  }
}
