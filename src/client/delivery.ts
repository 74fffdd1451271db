/**
 * Hands messages to the SDK in order, through one queue. The SDK runs notification
 * handlers asynchronously but settles a response at once, dropping its progress handler:
 * a response therefore waits one macrotask after notifications delivered before it, or
 * its own progress notifications would be lost.
 */
import { queueMacrotask } from '#turn';
import type { JsonRpcMessage } from '../protocol/jsonrpc.js';

export class OrderedDelivery {
  readonly #inbox: JsonRpcMessage[] = [];
  readonly #sink: (message: JsonRpcMessage) => void;
  #draining = false;
  #notifiedSinceYield = false;

  constructor(sink: (message: JsonRpcMessage) => void) {
    this.#sink = sink;
  }

  push(message: JsonRpcMessage): void {
    this.#inbox.push(message);
    if (!this.#draining) void this.#drain();
  }

  async #drain(): Promise<void> {
    this.#draining = true;
    try {
      for (let m = this.#inbox.shift(); m !== undefined; m = this.#inbox.shift()) {
        const isResponse = !('method' in m);
        if (isResponse && this.#notifiedSinceYield) {
          await new Promise<void>((resolve) => queueMacrotask(resolve));
          this.#notifiedSinceYield = false;
        }
        if (!isResponse) this.#notifiedSinceYield = true;
        this.#sink(m);
      }
    } finally {
      this.#draining = false;
    }
  }
}
