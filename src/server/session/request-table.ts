/**
 * The requests a session has in flight: which stream owes each response, which POSTs wait
 * for a JSON answer, and admission (the per-session bound, no duplicate ids).
 */
import { ContinuityError } from '../../protocol/errors.js';
import { errorResponse, type JsonRpcMessage, type RequestId } from '../../protocol/jsonrpc.js';
import type { OutboundStream } from '../stream/outbound-stream.js';

/** JSON text of an id: keeps `1` and `"1"` apart. */
export function idKey(id: RequestId): string {
  // A number's JSON text is its decimal text (ids are finite: they came from JSON); this
  // runs per notification related to a request, so skip the serializer for the common case.
  return typeof id === 'number' ? `${id}` : JSON.stringify(id);
}

export class RequestTable {
  /** Request key → the stream that owes its response. */
  readonly #byRequest = new Map<string, OutboundStream>();
  /** Request key → resolver, for requests answered as JSON. */
  readonly #jsonWaiters = new Map<string, { id: RequestId; resolve: (message: JsonRpcMessage) => void }>();
  readonly #max: number;

  constructor(maxInFlight: number) {
    this.#max = maxInFlight;
  }

  get size(): number {
    return this.#byRequest.size + this.#jsonWaiters.size;
  }

  /** Refuses `keys` if they would exceed the bound or repeat an id in flight. */
  admit(keys: readonly string[]): void {
    if (this.size + keys.length > this.#max) throw new ContinuityError('in-flight-limit');
    const seen = new Set<string>();
    for (const k of keys) {
      if (seen.has(k) || this.#byRequest.has(k) || this.#jsonWaiters.has(k)) {
        throw new ContinuityError('duplicate-request-id', `A request with id ${k} is already in flight`);
      }
      seen.add(k);
    }
  }

  /** Admits `keys` (see {@link admit}), answered on `stream`. */
  admitOn(keys: readonly string[], stream: OutboundStream): void {
    this.admit(keys);
    this.onStream(keys, stream);
  }

  /** `keys` are answered on `stream`. */
  onStream(keys: readonly string[], stream: OutboundStream): void {
    for (const k of keys) this.#byRequest.set(k, stream);
  }

  /** The stream owing the response to `key`, if any. */
  stream(key: string): OutboundStream | undefined {
    return this.#byRequest.get(key);
  }

  /** `key` was answered: forget it. */
  answered(key: string): void {
    this.#byRequest.delete(key);
  }

  /** The JSON body answering these requests (an array for a batch), once every answer is in. */
  async awaitJson(keys: readonly string[], ids: readonly RequestId[], batch: boolean): Promise<string> {
    const results = await Promise.all(
      keys.map((k, i) => new Promise<JsonRpcMessage>((resolve) => this.#jsonWaiters.set(k, { id: ids[i] as RequestId, resolve }))),
    );
    return JSON.stringify(batch ? results : results[0]);
  }

  /** Hands `message` to a POST waiting for it as JSON; false if none waits. */
  resolveJson(key: string, message: JsonRpcMessage): boolean {
    const waiter = this.#jsonWaiters.get(key);
    if (!waiter) return false;
    this.#jsonWaiters.delete(key);
    waiter.resolve(message);
    return true;
  }

  /** Everything in flight is given up (the session ended here). */
  abandonAll(): void {
    this.#byRequest.clear();
    // A JSON answer still owed can never come: say so instead of leaving the POST hanging.
    for (const { id, resolve } of this.#jsonWaiters.values())
      resolve(errorResponse(id, new ContinuityError('request-abandoned', undefined, { mayHaveRun: true })));
    this.#jsonWaiters.clear();
  }
}
