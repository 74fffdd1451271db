/**
 * Requests whose POST has not been answered with headers yet. A recovery fails them with
 * its typed error — at once, or, when the session was found gone, after giving each a
 * moment to hear its own answer: a 404 of their own proves they ran nowhere, and they are
 * sent again on the new session.
 */
import type { ContinuityError } from '../protocol/errors.js';
import type { JsonRpcMessage, RequestId } from '../protocol/jsonrpc.js';

/** How long a recovery after a lost session waits for POSTs already on their way. */
const GRACE_MS = 1000;

export interface Posting {
  readonly key: string;
  readonly id: RequestId;
  /** Resolves once the POST's fetch returned (or failed). */
  readonly settled: Promise<void>;
  readonly answered: () => void;
}

export class InFlightPosts {
  readonly #posts = new Map<string, Posting>();

  /** Registers a request's POST; undefined for notifications and responses. */
  begin(message: JsonRpcMessage): Posting | undefined {
    if (!('method' in message && 'id' in message)) return undefined;
    let answered!: () => void;
    const settled = new Promise<void>((resolve) => (answered = resolve));
    const posting: Posting = { key: JSON.stringify(message.id), id: message.id, settled, answered };
    this.#posts.set(posting.key, posting);
    return posting;
  }

  /** Is this POST still ours to answer (not failed by a recovery)? */
  owns(posting: Posting): boolean {
    return this.#posts.get(posting.key) === posting;
  }

  /** The POST's fetch returned: true if it is still ours (it is ours no more). */
  end(posting: Posting): boolean {
    posting.answered();
    if (!this.owns(posting)) return false;
    this.#posts.delete(posting.key);
    return true;
  }

  /** Fails every POST now in flight with `error`; resolves with how many failed. */
  failAll(error: ContinuityError, sessionGone: boolean, emit: (message: JsonRpcMessage) => void): Promise<number> {
    const inFlight = [...this.#posts.values()];
    const fail = (): number => {
      let n = 0;
      for (const p of inFlight) {
        if (!this.owns(p)) continue; // answered meanwhile
        this.#posts.delete(p.key);
        emit({ jsonrpc: '2.0', id: p.id, error: error.toJsonRpcError() });
        n++;
      }
      return n;
    };
    if (!sessionGone) return Promise.resolve(fail());
    const grace = new Promise<void>((resolve) => setTimeout(resolve, GRACE_MS).unref?.());
    return Promise.race([Promise.all(inFlight.map((p) => p.settled)), grace]).then(fail);
  }
}
