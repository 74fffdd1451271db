/**
 * One SSE HTTP response body: a ReadableStream the adapter pipes to the socket, plus the
 * writer side the session uses. Bounded: a write that would put more than
 * `maxBufferedBytes` in the queue cuts the reader off instead (it can resume from the
 * log), and a cut reader's queued bytes are dropped at once.
 *
 * Contract with the adapter that pipes `body` to a socket: a cut **errors** the body
 * stream (`controller.error`). The adapter must then destroy the connection at once —
 * not end it, and not wait for the socket to drain (a reader that never reads never
 * drains) — so the bytes the adapter itself still holds are released too. Watching
 * `reader.closed` (it rejects on error) catches a cut while a write waits for `drain`.
 *
 * Direct mode: a Node adapter may take the sink over with {@link SseSink.attach} once it
 * has taken what the body stream already holds. From then on the sink's text goes
 * straight to the response (Node encodes it on the way to the socket), without a web
 * stream, an encoded copy and a promise per chunk in between; the same bound, pacing and
 * cut rules apply to what the response holds.
 */
import { ContinuityError } from '../../protocol/errors.js';
import { encodeSseComment, encodeSseLogEvent, encodeSseRetry } from '../../protocol/sse.js';
import type { EventSink } from './event-sink.js';
import { DEFAULT_MAX_BUFFERED_BYTES_TOTAL, DEFAULT_READER_STALL_MS, ReaderShare } from './reader-budget.js';
import { countReaderCut, type CutReason } from '../../telemetry/server.js';

const encoder = new TextEncoder();

/** Bytes the body stream holds before `drained()` makes a paced writer (a replay) wait. */
const HIGH_WATER_BYTES = 64 * 1024;

/** A response a sink can write to directly (see {@link SseSink.attach}). */
export interface DirectPort {
  /** Queues text for the socket. */
  write(text: string): void;
  /** Bytes (for text, UTF-16 units, as Node counts them) queued and not yet taken by the socket. */
  readonly queuedBytes: number;
  /** Ends the response once what is queued has gone. */
  end(): void;
  /** Ends the connection at once, dropping what is queued. */
  destroy(): void;
  /** `listener` runs each time the queue has emptied. */
  onDrain(listener: () => void): void;
  /** `listener` runs once when the response is gone (finished, or the client left). */
  onClose(listener: () => void): void;
}

/** Body stream → its sink, so an adapter can find the sink behind a `Response`. */
const SINKS = new WeakMap<ReadableStream<Uint8Array>, SseSink>();

/** The sink writing `body`, if a sink made it (the Node adapter then writes it directly). */
export function sseSinkOf(body: ReadableStream<Uint8Array> | null): SseSink | undefined {
  return body === null ? undefined : SINKS.get(body);
}

export interface SseSinkOptions {
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
   * (default {@link DEFAULT_READER_STALL_MS}); a response that ended with bytes still
   * queued gets as long to take them before its connection is closed. Without it a client
   * that stops reading pins what was queued for it for as long as its connection lives.
   */
  stallMs?: number | undefined;
  keepAliveMs: number;
  /** Called once when the sink ends for any reason (client gone, cut, closed). */
  onEnd?: ((sink: SseSink) => void) | undefined;
}

/** The writer side of one SSE response. */
export class SseSink implements EventSink {
  readonly body: ReadableStream<Uint8Array>;
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  #ended = false;
  #waiters: Array<() => void> = [];
  #keepAlive: ReturnType<typeof setInterval> | undefined;
  readonly #options: SseSinkOptions;
  /** Set by {@link attach}: writes go straight to the response. */
  #port: DirectPort | undefined;
  /** This sink's share of what all readers of the process hold. */
  readonly #share = new ReaderShare();
  readonly #maxTotal: number;
  readonly #stallMs: number;
  /** When the queue was last empty (a drain, a pull, a write into an empty queue). */
  #emptyAt = performance.now();
  /** Ended with bytes queued: the connection is closed if they are not taken in time. */
  #lingering: ReturnType<typeof setTimeout> | undefined;

  constructor(options: SseSinkOptions) {
    this.#options = options;
    this.#maxTotal = options.maxBufferedBytesTotal ?? DEFAULT_MAX_BUFFERED_BYTES_TOTAL;
    this.#stallMs = options.stallMs ?? DEFAULT_READER_STALL_MS;
    this.body = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.#controller = controller;
        },
        pull: () => {
          this.#emptyAt = performance.now();
          this.#count();
          this.#wake();
        },
        cancel: () => {
          // The client went away (the adapter cancels the body on socket close).
          this.#end();
          this.#release();
        },
      },
      // Count bytes so desiredSize tells how far the socket lags.
      { highWaterMark: HIGH_WATER_BYTES, size: (chunk) => chunk.byteLength },
    );
    SINKS.set(this.body, this);
    if (options.keepAliveMs > 0) {
      // One at once: some servers (Bun) send no headers before the first body bytes, and
      // time out a connection that has sent nothing (Bun: 10 s by default).
      this.#write(encodeSseComment('keep-alive'));
      this.#keepAlive = setInterval(() => this.#write(encodeSseComment('keep-alive')), options.keepAliveMs);
      this.#keepAlive.unref?.();
    }
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** Bytes written and not yet taken by the adapter (in direct mode: by the socket). */
  get queuedBytes(): number {
    if (this.#ended) return 0;
    return this.#port ? this.#port.queuedBytes : this.bodyQueuedBytes;
  }

  /** Bytes the body stream holds: what an adapter must read before {@link attach}. */
  get bodyQueuedBytes(): number {
    if (this.#port) return 0;
    return HIGH_WATER_BYTES - (this.#controller.desiredSize ?? HIGH_WATER_BYTES);
  }

  /**
   * Direct mode: from now on text goes to `port`, not the body stream. Call it only when
   * {@link bodyQueuedBytes} is 0 (in the same turn that saw it), on a sink not yet ended.
   */
  attach(port: DirectPort): void {
    if (this.#ended || this.#port) throw new ContinuityError('internal-error', 'An SSE sink can be attached once, while open');
    this.#port = port;
    port.onDrain(() => {
      this.#emptyAt = performance.now();
      this.#count(port.queuedBytes);
      this.#wake();
    });
    // The client went away, or the response finished.
    port.onClose(() => {
      this.#end();
      this.#release();
    });
  }

  /**
   * Writes events; returns false if the sink has ended (or was just cut for lagging).
   * Their IDs are the codec's (see {@link EventSink.write}), so they are not re-checked.
   */
  write(events: ReadonlyArray<{ id: string; data: string; retry?: number | undefined }>): boolean {
    let text = '';
    for (const e of events) text += encodeSseLogEvent(e.id, e.data, e.retry);
    return this.#write(text);
  }

  /** Writes a bare `retry:` directive. */
  retry(ms: number): boolean {
    return this.#write(encodeSseRetry(ms));
  }

  /** Resolves when the reader wants more data (or the sink ended). For paced replays. */
  drained(): Promise<void> {
    if (this.#ended || this.queuedBytes < HIGH_WATER_BYTES) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Ends the response normally: what is queued is still delivered, then the stream closes. */
  close(): void {
    if (this.#ended) return;
    this.#end();
    const port = this.#port;
    if (port) {
      const queued = port.queuedBytes;
      if (queued > 0) {
        // Still counted until the socket takes it; a client that never does is let go.
        this.#count(queued);
        this.#lingering = setTimeout(() => port.destroy(), Math.max(0, this.#stallMs - (performance.now() - this.#emptyAt)));
        this.#lingering.unref?.();
      } else this.#release();
      return port.end();
    }
    this.#release();
    try {
      this.#controller.close();
    } catch {
      // Already closed or errored by the consumer: nothing left to end.
    }
  }

  /**
   * A newer reader took this one's stream over. Caught up, it ends normally: a client that
   * opened two readers (some do, racing at connect) then keeps one. Reconnecting after an
   * error, each would take the other over, once a retry interval, for as long as they live.
   * With bytes still queued it may be a dead connection, the reason takeovers exist: cut.
   */
  takenOver(): void {
    if (this.queuedBytes === 0) this.close();
    else this.cut('taken-over');
  }

  /**
   * Cuts the reader off (it lags, or a newer reader took its stream over): the queued
   * bytes are dropped now and the body errors, so the adapter destroys the connection.
   * Nothing is lost: everything written was logged first; the client resumes from its cursor.
   */
  cut(reason: CutReason = 'behind'): void {
    if (this.#ended) return;
    countReaderCut(reason);
    this.#end();
    this.#release();
    if (this.#port) return this.#port.destroy();
    try {
      this.#controller.error(new ContinuityError('reader-cut'));
    } catch {
      // Already closed or errored by the consumer.
    }
  }

  #write(text: string): boolean {
    if (this.#ended) return false;
    const port = this.#port;
    if (port) {
      const queued = port.queuedBytes;
      // The same rules as below, on what the response holds.
      if (queued === 0) this.#emptyAt = performance.now();
      else if (this.#over(queued, text.length)) {
        this.cut();
        return false;
      }
      port.write(text);
      // What the socket had not taken since the last write: Node signals no drain after a
      // write that stayed under its high-water mark, so counting this write would leave it
      // counted after it went out.
      this.#count(queued);
      return true;
    }
    const chunk = encoder.encode(text);
    const queued = this.queuedBytes;
    // Checked before queueing: a lagging reader never holds more than the bound, and all
    // lagging readers together not much more than theirs. One write into an empty queue
    // always goes, so an event larger than the bound still reaches a reader that keeps up.
    if (queued === 0) this.#emptyAt = performance.now();
    else if (this.#over(queued, chunk.byteLength)) {
      this.cut();
      return false;
    }
    this.#controller.enqueue(chunk);
    this.#count(queued + chunk.byteLength);
    return true;
  }

  /**
   * Is a reader with `queued` bytes behind past a bound with `adding` more: its own, all
   * readers' together, or the time it may go without emptying its queue? (Checked on every
   * write, keep-alives included, so a stalled reader is cut within a keep-alive interval.)
   */
  #over(queued: number, adding: number): boolean {
    return queued + adding > this.#options.maxBufferedBytes
      || this.#share.totalWith(queued + adding) > this.#maxTotal
      || performance.now() - this.#emptyAt > this.#stallMs;
  }

  /** Counts this sink's queue (`queued`, or as it is now) into the process's total. */
  #count(queued: number = this.queuedBytes): void {
    this.#share.count(queued);
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w();
  }

  /** Takes this sink out of the process's total, for good. */
  #release(): void {
    if (this.#lingering) clearTimeout(this.#lingering);
    this.#lingering = undefined;
    this.#share.release();
  }

  #end(): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.#keepAlive) clearInterval(this.#keepAlive);
    this.#wake();
    this.#options.onEnd?.(this);
  }
}

/**
 * The GET readers of one session (resumes and the standalone stream), bounded: each holds
 * up to `maxBufferedBytes`, so their number is what bounds a session's buffered memory.
 * Past the bound a new reader is refused with `reader-limit` (429, retryable).
 */
export class SessionReaders {
  #sinks: SseSink[] = [];

  /** A new sink; counted against `max` when one is given. */
  open(options: SseSinkOptions, max?: number): SseSink {
    if (max === undefined) return new SseSink(options);
    this.#sinks = this.#sinks.filter((s) => !s.ended);
    if (this.#sinks.length >= max) throw new ContinuityError('reader-limit', undefined, { limit: max });
    const sink = new SseSink(options);
    this.#sinks.push(sink);
    return sink;
  }
}
