/**
 * One SSE HTTP response body: a ReadableStream the adapter pipes to the socket, plus the
 * writer side the session uses. Bounded: a reader that falls more than `maxBufferedBytes`
 * behind is cut off (it can resume from the log) instead of growing memory without end.
 */
import { encodeSseComment, encodeSseEvent, encodeSseRetry } from '../protocol/sse.js';
import type { EventSink } from './event-sink.js';

const encoder = new TextEncoder();

export interface SseSinkOptions {
  maxBufferedBytes: number;
  keepAliveMs: number;
  /** Called once when the sink ends for any reason (client gone, cut, closed). */
  onEnd?: (sink: SseSink) => void;
}

/** The writer side of one SSE response. */
export class SseSink implements EventSink {
  readonly body: ReadableStream<Uint8Array>;
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  #ended = false;
  #waiters: Array<() => void> = [];
  #keepAlive: ReturnType<typeof setInterval> | undefined;
  readonly #options: SseSinkOptions;

  constructor(options: SseSinkOptions) {
    this.#options = options;
    this.body = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.#controller = controller;
        },
        pull: () => {
          this.#wake();
        },
        cancel: () => {
          // The client went away (the adapter cancels the body on socket close).
          this.#end();
        },
      },
      // Count bytes so desiredSize tells how far the socket lags.
      { highWaterMark: 64 * 1024, size: (chunk) => chunk.byteLength },
    );
    if (options.keepAliveMs > 0) {
      this.#keepAlive = setInterval(() => this.#write(encodeSseComment('keep-alive')), options.keepAliveMs);
      this.#keepAlive.unref?.();
    }
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** Writes events; returns false if the sink has ended (or was just cut for lagging). */
  write(events: ReadonlyArray<{ id: string; data: string; retry?: number }>): boolean {
    let text = '';
    for (const e of events) text += encodeSseEvent(e);
    return this.#write(text);
  }

  /** Writes a bare `retry:` directive. */
  retry(ms: number): boolean {
    return this.#write(encodeSseRetry(ms));
  }

  /** Resolves when the reader wants more data (or the sink ended). For paced replays. */
  drained(): Promise<void> {
    if (this.#ended || (this.#controller.desiredSize ?? 0) > 0) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Ends the response normally (the client sees the stream close). */
  close(): void {
    if (this.#ended) return;
    this.#end();
    try {
      this.#controller.close();
    } catch {
      // Already closed or errored by the consumer: nothing left to end.
    }
  }

  #write(text: string): boolean {
    if (this.#ended) return false;
    const chunk = encoder.encode(text);
    this.#controller.enqueue(chunk);
    if (-(this.#controller.desiredSize ?? 0) > this.#options.maxBufferedBytes) {
      // Lagging reader: cut it rather than buffer without bound. Nothing is lost:
      // everything written was logged first, and the client resumes with Last-Event-ID.
      this.close();
      return false;
    }
    return true;
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w();
  }

  #end(): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.#keepAlive) clearInterval(this.#keepAlive);
    this.#wake();
    this.#options.onEnd?.(this);
  }
}
