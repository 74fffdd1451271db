import { BoundedWriter, type ReaderBounds } from './bounded-writer.js';
import { countReaderCut } from '../../telemetry/server.js';

/** Where an outbound stream writes: an SSE response, or (after an upgrade) a WebSocket. */
export interface EventSink {
  readonly ended: boolean;
  /**
   * Writes events; returns false if the sink has ended. Each `id` is an event ID the
   * codec made (`formatEventId`, or a validated `eventIdPrefix` plus seq and chain).
   */
  write(events: ReadonlyArray<{ id: string; data: string; retry?: number | undefined }>): boolean;
  /** A `retry:` directive (SSE only; other sinks ignore it). */
  retry(ms: number): boolean;
  /** Resolves when the reader wants more data (or the sink ended). */
  drained(): Promise<void>;
  close(): void;
  /** Drops what is queued and ends the reader at once (it lags, or was taken over). */
  cut(): void;
  /**
   * A newer reader took this one's stream over. A reader that is keeping up is ended
   * normally; one with bytes still queued (a connection that may be dead) is cut.
   */
  takenOver(): void;
}

/**
 * Where a sink's text goes once it leaves the core: a Node response written directly, or a
 * WebSocket. Every sink bounds what its port holds by the same policy ({@link BoundedWriter}).
 */
export interface SinkPort {
  /**
   * Queues text for the reader. Returns true when `onDrain` listeners will run once this
   * text has been taken; false when it was taken (or dropped) with no signal to come, so
   * only what was queued before it may be counted.
   */
  write(text: string): boolean;
  /** Bytes (for text, UTF-16 units, as Node counts them) queued and not yet taken by the reader. */
  readonly queuedBytes: number;
  /** Ends once what is queued has gone. */
  end(): void;
  /** Ends at once, dropping what is queued (a cut). */
  destroy(): void;
  /** `listener` runs each time the reader has taken some or all of what was queued. */
  onDrain(listener: () => void): void;
  /** `listener` runs once when the reader is gone (finished, or the client left). */
  onClose(listener: () => void): void;
}

/** A WebSocket as the core needs it: a sink port that also receives text frames. */
export interface SocketPort extends SinkPort {
  /** Closes with a WebSocket close code (a refused handshake that completed). */
  close(code: number, reason: string): void;
  onMessage(listener: (text: string) => void): void;
}

/** What a socket may hold for its reader: alone, with every other reader, and for how long. */
export type SocketBounds = ReaderBounds;

/** Below this many queued bytes a paced replay writes its next page. */
const LOW_WATER_BYTES = 1024 * 1024;

/**
 * Events as WebSocket text frames: one JSON-RPC message per frame. Priming events carry
 * no message and are not sent. Past its bounds (its own, all readers' together while it is
 * behind, or stalled) the socket is closed, not buffered.
 */
export class SocketSink implements EventSink {
  #ended = false;
  readonly #port: SocketPort;
  readonly #writer: BoundedWriter;

  constructor(port: SocketPort, bounds: SocketBounds) {
    this.#port = port;
    this.#writer = new BoundedWriter(bounds, LOW_WATER_BYTES);
    port.onDrain(() => {
      if (!this.#ended) this.#writer.progressed(port.queuedBytes);
    });
    port.onClose(() => {
      this.#ended = true;
      this.#writer.release();
    });
  }

  get ended(): boolean {
    return this.#ended;
  }

  write(events: ReadonlyArray<{ id: string; data: string }>): boolean {
    if (this.#ended) return false;
    let adding = 0;
    for (const e of events) adding += e.data.length;
    if (!this.#writer.admits(this.#port.queuedBytes, adding)) {
      this.cut();
      return false;
    }
    for (const e of events) if (e.data !== '') this.#port.write(e.data);
    this.#writer.count(this.#port.queuedBytes);
    return true;
  }

  retry(): boolean {
    return !this.#ended;
  }

  drained(): Promise<void> {
    return this.#writer.drained(this.#port.queuedBytes, this.#ended);
  }

  close(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#writer.release();
    this.#port.end();
  }

  cut(): void {
    if (this.#ended) return;
    countReaderCut('behind');
    this.#ended = true;
    this.#writer.release();
    this.#port.destroy();
  }

  takenOver(): void {
    this.close();
  }
}
