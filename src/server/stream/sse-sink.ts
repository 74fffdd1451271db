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
 * The sink writes to one port: the body stream's ({@link WebBodyPort}) until a Node
 * adapter takes the sink over with {@link SseSink.attach}, once it has taken what the body
 * stream already holds. From then on the sink's text goes straight to the response (Node
 * encodes it on the way to the socket), without a web stream, an encoded copy and a
 * promise per chunk in between; the same bound, pacing and cut rules apply to either port.
 */
import { ContinuityError } from '../../protocol/errors.js';
import { encodeSseComment, encodeSseLogEvent, encodeSseRetry } from '../../protocol/sse.js';
import type { EventSink, SinkPort } from './event-sink.js';
import { BoundedWriter, type ReaderBounds } from './bounded-writer.js';
import { countReaderCut, type CutReason } from '../../telemetry/server.js';
import { WebBodyPort } from './web-body-port.js';

/** Bytes the body stream holds before `drained()` makes a paced writer (a replay) wait. */
const HIGH_WATER_BYTES = 64 * 1024;

/** Body stream → its sink, so an adapter can find the sink behind a `Response`. */
const SINKS = new WeakMap<ReadableStream<Uint8Array>, SseSink>();

/** The sink writing `body`, if a sink made it (the Node adapter then writes it directly). */
export function sseSinkOf(body: ReadableStream<Uint8Array> | null): SseSink | undefined {
  return body === null ? undefined : SINKS.get(body);
}

/**
 * The bounds of one SSE reader (see {@link ReaderBounds}); `stallMs` also bounds how long a
 * response that ended with bytes still queued gets to take them before its connection closes.
 */
export interface SseSinkOptions extends ReaderBounds {
  keepAliveMs: number;
  /** Called once when the sink ends for any reason (client gone, cut, closed). */
  onEnd?: ((sink: SseSink) => void) | undefined;
}

/** The writer side of one SSE response. */
export class SseSink implements EventSink {
  readonly body: ReadableStream<Uint8Array>;
  #ended = false;
  #keepAlive: ReturnType<typeof setInterval> | undefined;
  readonly #options: SseSinkOptions;
  /** The response body's port: where text goes until an adapter attaches its own. */
  readonly #web: WebBodyPort;
  /** Where text goes: {@link #web}, or the port given to {@link attach}. */
  #port: SinkPort;
  /** The bounds, the share of the process's total and the stall clock. */
  readonly #writer: BoundedWriter;
  /** Ended with bytes queued: the connection is closed if they are not taken in time. */
  #lingering: ReturnType<typeof setTimeout> | undefined;

  constructor(options: SseSinkOptions) {
    this.#options = options;
    this.#writer = new BoundedWriter(options, HIGH_WATER_BYTES);
    this.#web = new WebBodyPort(HIGH_WATER_BYTES);
    this.body = this.#web.body;
    this.#port = this.#web;
    this.#follow(this.#web);
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

  /** Bytes written and not yet taken by the reader (in direct mode: by the socket). */
  get queuedBytes(): number {
    return this.#ended ? 0 : this.#port.queuedBytes;
  }

  /** Bytes the body stream holds: what an adapter must read before {@link attach}. */
  get bodyQueuedBytes(): number {
    return this.#port === this.#web ? this.#web.queuedBytes : 0;
  }

  /**
   * Direct mode: from now on text goes to `port`, not the body stream. Call it only when
   * {@link bodyQueuedBytes} is 0 (in the same turn that saw it), on a sink not yet ended.
   */
  attach(port: SinkPort): void {
    if (this.#ended || this.#port !== this.#web) throw new ContinuityError('internal-error', 'An SSE sink can be attached once, while open');
    this.#port = port;
    this.#follow(port);
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
    return this.#writer.drained(this.queuedBytes, this.#ended);
  }

  /** Ends the response normally: what is queued is still delivered, then the stream closes. */
  close(): void {
    if (this.#ended) return;
    this.#end();
    const port = this.#port;
    const queued = port.queuedBytes;
    if (queued > 0) {
      // Still counted until the reader takes it; a client that never does is let go.
      this.#writer.count(queued);
      this.#lingering = setTimeout(() => port.destroy(), this.#writer.lingerMs());
      this.#lingering.unref?.();
    } else this.#release();
    port.end();
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
   * bytes are dropped now and the port destroyed (a body stream errors), so the adapter
   * destroys the connection. Nothing is lost: everything written was logged first; the
   * client resumes from its cursor.
   */
  cut(reason: CutReason = 'behind'): void {
    if (this.#ended) return;
    countReaderCut(reason);
    this.#end();
    this.#release();
    this.#port.destroy();
  }

  /** Progress and the end of the reader behind `port`, while it is the one written to. */
  #follow(port: SinkPort): void {
    port.onDrain(() => {
      if (this.#port === port) this.#writer.progressed(port.queuedBytes);
    });
    // The client went away, or the response finished.
    port.onClose(() => {
      if (this.#port !== port) return;
      this.#end();
      this.#release();
    });
  }

  #write(text: string): boolean {
    if (this.#ended) return false;
    const port = this.#port;
    const queued = port.queuedBytes;
    // Checked before queueing: a lagging reader never holds more than the bound, and all
    // lagging readers together not much more than theirs.
    if (!this.#writer.admits(queued, text.length)) {
      this.cut();
      return false;
    }
    // A write the port will not signal the end of (Node signals no drain after a write
    // that stayed under its high-water mark) counts only what was queued before it,
    // so it is not left counted after it went out.
    const signalled = port.write(text);
    this.#writer.count(signalled ? port.queuedBytes : queued);
    return true;
  }

  /** Takes this sink out of the process's total, for good. */
  #release(): void {
    if (this.#lingering) clearTimeout(this.#lingering);
    this.#lingering = undefined;
    this.#writer.release();
  }

  #end(): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.#keepAlive) clearInterval(this.#keepAlive);
    this.#writer.wake();
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
