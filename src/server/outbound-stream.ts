/**
 * One logical outbound stream of a session (the standalone GET stream, or the stream that
 * answers one POST). It numbers and chains events, writes them to the log first, and only
 * then to whichever SSE response is attached, so a message produced while the client is
 * away waits in the log. Appends are group-committed: events queued while one store write
 * is in flight go out together in the next.
 */
import { chainSeed, formatEventId, nextChain } from '../protocol/event-id.js';
import type { EventLog, LogEvent, StreamHead, StreamInfo } from '../store/types.js';
import type { EventSink } from './event-sink.js';

/** What a stream needs from its session. */
export interface StreamHost {
  readonly sessionId: string;
  readonly epoch: string;
  readonly log: EventLog;
  readonly replayPageSize: number;
  now(): number;
  /** The stream has written and closed its last event. */
  onStreamComplete(stream: OutboundStream): void;
}

interface Pending {
  event: LogEvent;
  /** `retry:` to send with this event when written live (priming events). */
  retry: number | undefined;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export class OutboundStream {
  readonly name: string;
  readonly kind: StreamInfo['kind'];
  readonly #host: StreamHost;
  /** Request keys (JSON of the id) this stream still owes a response. */
  readonly #open: Set<string>;
  #lastSeq: number;
  #lastChain: string;
  #persistedSeq: number;
  #pending: Pending[] = [];
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
    this.#lastSeq = lastSeq;
    this.#lastChain = lastChain;
    this.#persistedSeq = lastSeq;
  }

  /** Creates the stream in the log and returns it. */
  static async open(host: StreamHost, name: string, info: StreamInfo): Promise<OutboundStream> {
    const seed = chainSeed(host.epoch, name);
    await host.log.openStream(host.sessionId, name, seed, info);
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
      if (!this.#flushing) void this.#flush();
    }
  }

  get lastSeq(): number {
    return this.#persistedSeq;
  }
  get deliveredSeq(): number {
    return this.#deliveredSeq;
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

  /** Queues `payload`; resolves once it is in the log (and written to the reader, if any). */
  append(payload: string, retry?: number): Promise<void> {
    if (this.#completing) return Promise.reject(new Error(`Stream ${this.name} is complete`));
    const seq = this.#lastSeq + 1;
    const chain = nextChain(this.#lastChain, payload);
    this.#lastSeq = seq;
    this.#lastChain = chain;
    return new Promise<void>((resolve, reject) => {
      this.#pending.push({ event: { seq, chain, payload, at: this.#host.now() }, retry, resolve, reject });
      if (!this.#flushing) void this.#flush();
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
    if (this.#sink && this.#sink !== sink) this.#sink.close();
    this.#sink = sink;
    this.#sinkSeq = afterSeq;
    this.#catchingUp = true;
    const { log, sessionId, replayPageSize } = this.#host;
    try {
      while (this.#sinkSeq < this.#persistedSeq) {
        const events = await log.read(sessionId, this.name, this.#sinkSeq, replayPageSize);
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

  /** Ends the attached response and forgets it (session terminated). */
  detach(): void {
    this.#sink?.close();
    this.#sink = undefined;
  }

  async #flush(): Promise<void> {
    this.#flushing = true;
    const { log, sessionId } = this.#host;
    try {
      while (this.#pending.length > 0) {
        const batch = this.#pending;
        this.#pending = [];
        try {
          await log.append(sessionId, this.name, batch.map((p) => p.event));
        } catch (error) {
          // Nothing of this batch is in the log, and later queued events chain off it:
          // fail them all and restart numbering from what the log holds.
          const failed = [...batch, ...this.#pending];
          this.#pending = [];
          this.#lastSeq = this.#persistedSeq;
          const last = await log.head(sessionId, this.name).catch(() => undefined);
          if (last) this.#lastChain = last.lastChain;
          for (const p of failed) p.reject(error);
          continue;
        }
        const last = batch[batch.length - 1] as Pending;
        this.#persistedSeq = last.event.seq;
        const sink = this.#sink;
        if (sink && !this.#catchingUp && !sink.ended) this.#writeToSink(sink, batch);
        for (const p of batch) p.resolve();
      }
      if (this.#completing && !this.#complete) await this.#finish();
    } finally {
      this.#flushing = false;
    }
  }

  async #finish(): Promise<void> {
    this.#complete = true;
    const { log, sessionId } = this.#host;
    await log.closeStream(sessionId, this.name);
    if (this.#sink && !this.#catchingUp) this.#sink.close();
    this.#host.onStreamComplete(this);
  }

  #writeToSink(sink: EventSink, entries: ReadonlyArray<{ event: LogEvent; retry: number | undefined }>): void {
    const { epoch } = this.#host;
    const out: Array<{ id: string; data: string; retry?: number }> = [];
    for (const { event, retry } of entries) {
      if (event.seq <= this.#sinkSeq) continue;
      const id = formatEventId({ epoch, stream: this.name, seq: event.seq, chain: event.chain });
      out.push(retry === undefined ? { id, data: event.payload } : { id, data: event.payload, retry });
      this.#sinkSeq = event.seq;
    }
    if (out.length === 0) return;
    if (sink.write(out) && this.#sinkSeq > this.#deliveredSeq) this.#deliveredSeq = this.#sinkSeq;
  }
}
