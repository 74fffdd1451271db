/** Where an outbound stream writes: an SSE response, or (after an upgrade) a WebSocket. */
export interface EventSink {
  readonly ended: boolean;
  /** Writes events; returns false if the sink has ended. */
  write(events: ReadonlyArray<{ id: string; data: string; retry?: number }>): boolean;
  /** A `retry:` directive (SSE only; other sinks ignore it). */
  retry(ms: number): boolean;
  /** Resolves when the reader wants more data (or the sink ended). */
  drained(): Promise<void>;
  close(): void;
  /** Drops what is queued and ends the reader at once (it lags, or was taken over). */
  cut(): void;
}

/** The part of a WebSocket the core needs; the Node adapter wraps `ws` in it. */
export interface SocketPort {
  send(text: string): void;
  close(code: number, reason: string): void;
  /** Bytes queued and not yet written, for backpressure. */
  readonly bufferedAmount: number;
  onMessage(listener: (text: string) => void): void;
  onClose(listener: () => void): void;
}

/**
 * Events as WebSocket text frames: one JSON-RPC message per frame. Priming events carry
 * no message and are not sent. Over its byte budget the socket is closed, not buffered.
 */
export class SocketSink implements EventSink {
  #ended = false;
  readonly #port: SocketPort;
  readonly #maxBufferedBytes: number;

  constructor(port: SocketPort, maxBufferedBytes: number) {
    this.#port = port;
    this.#maxBufferedBytes = maxBufferedBytes;
    port.onClose(() => {
      this.#ended = true;
    });
  }

  get ended(): boolean {
    return this.#ended;
  }

  write(events: ReadonlyArray<{ id: string; data: string }>): boolean {
    if (this.#ended) return false;
    for (const e of events) if (e.data !== '') this.#port.send(e.data);
    if (this.#port.bufferedAmount > this.#maxBufferedBytes) {
      this.close();
      return false;
    }
    return true;
  }

  retry(): boolean {
    return !this.#ended;
  }

  async drained(): Promise<void> {
    // ws has no drain event; a short poll bounds memory during large replays.
    while (!this.#ended && this.#port.bufferedAmount > 1024 * 1024) await new Promise((r) => setTimeout(r, 5));
  }

  close(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#port.close(1000, 'closing');
  }

  cut(): void {
    this.close();
  }
}
