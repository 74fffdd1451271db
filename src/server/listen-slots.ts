/**
 * The modern leg's `subscriptions/listen` streams, counted per client and in all. The SDK
 * bounds them per handler only, so without this one client could hold every slot.
 */
import { ContinuityError } from '../protocol/errors.js';
import type { HandleContext } from './session/context.js';

/** The bounds of {@link ListenSlots} (the endpoint's `limits`). */
export interface ListenBounds {
  readonly maxListensPerClient: number;
  readonly maxListens: number;
}

/**
 * Whom a listen counts against: the principal where the host names one, else the client
 * the host (or the Node adapter: the peer's address) names, else one bucket for every
 * request nobody named. The prefixes keep a principal from posing as an address.
 */
export function listenClientOf(context: HandleContext): string {
  if (context.principal !== undefined) return `principal:${context.principal}`;
  if (context.client !== undefined) return `client:${context.client}`;
  return 'anonymous';
}

export class ListenSlots {
  readonly #byClient = new Map<string, number>();
  #total = 0;

  constructor(private readonly bounds: ListenBounds) {}

  /** Streams open now, in all and for `client`. */
  open(client?: string): number {
    return client === undefined ? this.#total : (this.#byClient.get(client) ?? 0);
  }

  /**
   * Takes a slot for `client`; returns its release (idempotent). Throws `listen-limit`
   * when the client holds its share, or the process is full.
   */
  take(client: string): () => void {
    const held = this.#byClient.get(client) ?? 0;
    if (held >= this.bounds.maxListensPerClient) {
      throw new ContinuityError('listen-limit', undefined, { scope: 'client', limit: this.bounds.maxListensPerClient });
    }
    if (this.#total >= this.bounds.maxListens) throw new ContinuityError('listen-limit', undefined, { scope: 'process', limit: this.bounds.maxListens });
    this.#byClient.set(client, held + 1);
    this.#total++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#total--;
      const left = (this.#byClient.get(client) ?? 1) - 1;
      if (left === 0) this.#byClient.delete(client);
      else this.#byClient.set(client, left);
    };
  }
}

/**
 * `response` with `release` called once its body ends, fails or is cancelled (the client
 * went away): a listen holds its slot for as long as its stream is open, and not longer.
 */
export function releasingAtEnd(response: Response, release: () => void): Response {
  const body = response.body;
  if (body === null) {
    release();
    return response;
  }
  const reader = body.getReader();
  const wrapped = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          release();
          controller.close();
        } else controller.enqueue(value);
      } catch (error) {
        release();
        controller.error(error);
      }
    },
    cancel(reason) {
      release();
      return reader.cancel(reason);
    },
  });
  return new Response(wrapped, { status: response.status, statusText: response.statusText, headers: response.headers });
}
