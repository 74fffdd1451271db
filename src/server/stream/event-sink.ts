import { BoundedWriter, type ReaderBounds } from './bounded-writer.js';
import { countReaderCut } from '../../telemetry/server.js';

/** One event as a sink writes it. */
export interface SinkEvent {
  /** An event ID the codec made (`formatEventId`, or a validated `eventIdPrefix` plus seq and chain). */
  readonly id: string;
  readonly data: string;
  /** The UTF-8 of `data`, when the log has it at hand: written as is instead of encoding `data`. */
  readonly utf8?: Uint8Array | undefined;
  /** `retry:` to send with it (priming events). */
  readonly retry?: number | undefined;
}

/** Where an outbound stream writes: an SSE response, or (after an upgrade) a WebSocket. */
export interface EventSink {
  readonly ended: boolean;
  /** Writes events; returns false if the sink has ended. */
  write(events: readonly SinkEvent[]): boolean;
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
 * Where a sink's output goes once it leaves the core: a Node response written directly, a
 * web response body, or a WebSocket. Every sink bounds what its port holds by the same
 * policy ({@link BoundedWriter}).
 */
export interface PortBase {
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

/** An SSE response's port: it takes text, or UTF-8 bytes written as they are. */
export interface SinkPort extends PortBase {
  /**
   * Queues a chunk for the reader. Bytes are shared (the log keeps them too): a port only
   * reads them, and copies them before handing them to code that might not. Returns true
   * when `onDrain` listeners will run once it has been taken; false when it was taken (or
   * dropped) with no signal to come, so only what was queued before it may be counted.
   */
  write(chunk: string | Uint8Array): boolean;
}

/** A WebSocket as the core needs it: a port that sends and receives text frames. */
export interface SocketPort extends PortBase {
  /** Sends one text frame; the return value is {@link SinkPort.write}'s. */
  write(text: string): boolean;
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

  write(events: readonly SinkEvent[]): boolean {
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
