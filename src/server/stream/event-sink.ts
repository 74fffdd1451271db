import { ReaderShare } from './reader-budget.js';
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

/** The part of a WebSocket the core needs; the Node adapter wraps `ws` in it. */
export interface SocketPort {
  /** Queues a text frame; `done` runs once it is written to the socket (or failed). */
  send(text: string, done?: (error?: Error) => void): void;
  close(code: number, reason: string): void;
  /** Bytes queued and not yet written, for backpressure. */
  readonly bufferedAmount: number;
  onMessage(listener: (text: string) => void): void;
  onClose(listener: () => void): void;
}

/** What a socket may hold for its reader: alone, and with every other reader of the process. */
export interface SocketBounds {
  maxBufferedBytes: number;
  maxBufferedBytesTotal: number;
}

/** Below this many queued bytes a paced replay writes its next page. */
const LOW_WATER_BYTES = 1024 * 1024;

/**
 * Events as WebSocket text frames: one JSON-RPC message per frame. Priming events carry
 * no message and are not sent. Over its byte budget (its own, or all readers' together
 * while it is behind) the socket is closed, not buffered.
 */
export class SocketSink implements EventSink {
  #ended = false;
  #waiters: Array<() => void> = [];
  readonly #port: SocketPort;
  readonly #bounds: SocketBounds;
  readonly #share = new ReaderShare();

  constructor(port: SocketPort, bounds: SocketBounds) {
    this.#port = port;
    this.#bounds = bounds;
    port.onClose(() => {
      this.#ended = true;
      this.#share.release();
      this.#wake();
    });
  }

  get ended(): boolean {
    return this.#ended;
  }

  write(events: ReadonlyArray<{ id: string; data: string }>): boolean {
    if (this.#ended) return false;
    const before = this.#port.bufferedAmount;
    for (const e of events) if (e.data !== '') this.#port.send(e.data, this.#sent);
    const queued = this.#port.bufferedAmount;
    if (queued > this.#bounds.maxBufferedBytes || (before > 0 && this.#share.totalWith(queued) > this.#bounds.maxBufferedBytesTotal)) {
      this.close();
      return false;
    }
    this.#share.count(queued);
    return true;
  }

  retry(): boolean {
    return !this.#ended;
  }

  drained(): Promise<void> {
    if (this.#ended || this.#port.bufferedAmount <= LOW_WATER_BYTES) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  close(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#share.release();
    this.#wake();
    this.#port.close(1000, 'closing');
  }

  cut(): void {
    if (!this.#ended) countReaderCut('behind');
    this.close();
  }

  takenOver(): void {
    this.close();
  }

  /** A frame left for the socket: wake paced writers once the queue is low again. */
  readonly #sent = (): void => {
    if (!this.#ended) this.#share.count(this.#port.bufferedAmount);
    if (this.#ended || this.#port.bufferedAmount <= LOW_WATER_BYTES) this.#wake();
  };

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w();
  }
}
