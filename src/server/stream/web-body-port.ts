/**
 * The sink port of a web `Response` body: text written to it is encoded and queued in a
 * `ReadableStream` that whoever serves the response (Bun, Deno, Workers, a fetch-style
 * framework, or the Node adapter until it takes the sink over) reads. It is what an SSE
 * sink writes to unless an adapter attaches a port of its own.
 */
import { ContinuityError } from '../../protocol/errors.js';
import type { SinkPort } from './event-sink.js';

const encoder = new TextEncoder();

export class WebBodyPort implements SinkPort {
  readonly body: ReadableStream<Uint8Array>;
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  readonly #highWater: number;
  #open = true;
  readonly #drain: Array<() => void> = [];
  readonly #close: Array<() => void> = [];

  /** `highWater`: bytes the stream holds before its reader counts as behind. */
  constructor(highWater: number) {
    this.#highWater = highWater;
    this.body = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.#controller = controller;
        },
        pull: () => {
          for (const listener of this.#drain) listener();
        },
        // The client went away (an adapter cancels the body when its socket closes).
        cancel: () => this.#closed(),
      },
      // Count bytes so desiredSize tells how far the reader lags.
      { highWaterMark: highWater, size: (chunk) => chunk.byteLength },
    );
  }

  /** Encoded bytes queued and not yet read. */
  get queuedBytes(): number {
    if (!this.#open) return 0;
    return this.#highWater - (this.#controller.desiredSize ?? this.#highWater);
  }

  /** Always true: a read that leaves room pulls, which is the drain signal. */
  write(text: string): boolean {
    if (this.#open) this.#controller.enqueue(encoder.encode(text));
    return true;
  }

  /**
   * Closes the stream; its reader still gets what is queued. A web stream says nothing when
   * that has been read, so the port counts as gone at once (nothing is held for it after).
   */
  end(): void {
    if (!this.#open) return;
    try {
      this.#controller.close();
    } catch {
      // Already closed or errored by the consumer: nothing left to end.
    }
    this.#closed();
  }

  /** Errors the stream (`reader-cut`), so whoever pipes it destroys the connection. */
  destroy(): void {
    if (!this.#open) return;
    try {
      this.#controller.error(new ContinuityError('reader-cut'));
    } catch {
      // Already closed or errored by the consumer.
    }
    this.#closed();
  }

  onDrain(listener: () => void): void {
    this.#drain.push(listener);
  }

  onClose(listener: () => void): void {
    this.#close.push(listener);
  }

  #closed(): void {
    if (!this.#open) return;
    this.#open = false;
    for (const listener of this.#close) listener();
  }
}
