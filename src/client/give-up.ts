/**
 * Given up means never sent. The SDK `Client` gives up on a request when it times out or its
 * `AbortSignal` aborts, and says so by sending `notifications/cancelled`, then tells the
 * application. From that moment no attempt of the request leaves the client: a wait between
 * attempts ends at once and no new attempt starts (a ride-through that went on would run the
 * call after the application was told it ended, and an application that retries would run it
 * twice).
 *
 * The cancellation itself goes to the server only when the server may hold the request: an
 * attempt is under way, or one ended without proof that no server took it. The application
 * then hears through `onerror` that the request may have run (`request-abandoned`,
 * `mayHaveRun: true`), once the attempt under way, if any, proved it may have. A request every
 * attempt of which was refused before a server took it never ran: nothing is sent, nothing
 * is reported beyond the SDK's own error.
 */
import { ContinuityError } from '../protocol/errors.js';
import type { JsonRpcMessage, RequestId } from '../protocol/jsonrpc.js';
import { OutageBudget } from './outage-budget.js';

/** One request's attempts while it is being sent: whether it may be on a server, whether it was given up. */
export class RequestAttempts {
  readonly id: RequestId;
  /** Shared by every POST of the request (a second one on a new session waits within the same bound). */
  readonly budget: OutageBudget;
  readonly #givenUp = new AbortController();
  #attempting = false;
  #mayHaveReached = false;
  /** Set once given up, until "may have run" is told. */
  #report: ((error: ContinuityError) => void) | undefined;

  constructor(id: RequestId, maxOutageMs: number) {
    this.id = id;
    this.budget = new OutageBudget(maxOutageMs);
  }

  /** Aborted when the application gave the request up. */
  get signal(): AbortSignal {
    return this.#givenUp.signal;
  }

  get givenUp(): boolean {
    return this.#givenUp.signal.aborted;
  }

  /** An attempt is about to be made. */
  begin(): void {
    this.#attempting = true;
  }

  /** The attempt ended: `reached` unless the server provably did not take it. */
  end(reached: boolean): void {
    this.#attempting = false;
    this.#mayHaveReached ||= reached;
    this.#tell();
  }

  /**
   * The application gave the request up: no attempt follows. True when the server may hold
   * it (its cancellation must go); `report` is called once that is known to be so.
   */
  giveUp(report: (error: ContinuityError) => void): boolean {
    this.#givenUp.abort();
    this.#report = report;
    this.#tell();
    return this.#mayHaveReached || this.#attempting;
  }

  /** The error a request given up before any server took it fails with (the SDK has already told the application). */
  neverSent(): ContinuityError {
    return new ContinuityError('server-unreachable', 'Given up before any server took it: never sent', { requestId: this.id });
  }

  #tell(): void {
    if (!this.#mayHaveReached || !this.#report) return;
    const detail = { requestId: this.id, mayHaveRun: true };
    this.#report(new ContinuityError('request-abandoned', 'Given up after it may have reached the server: it may have run; its cancellation was sent', detail));
    this.#report = undefined;
  }
}

/** The request a `notifications/cancelled` names, as a map key. */
function cancelled(message: JsonRpcMessage): string | undefined {
  const id = 'method' in message && message.method === 'notifications/cancelled' ? message.params?.requestId : undefined;
  return id === undefined ? undefined : JSON.stringify(id);
}

/** The requests being sent, by the application's id, so that a cancellation finds its request before anything waits. */
export class GiveUps {
  readonly #open = new Map<string, RequestAttempts>();
  readonly #maxOutageMs: number;
  readonly #report: (error: Error) => void;

  constructor(maxOutageMs: number, report: (error: Error) => void) {
    this.#maxOutageMs = maxOutageMs;
    this.#report = report;
  }

  /**
   * Sends `message` with `run`: a request is tracked until `run` ends (its POST answered or
   * failed); a cancellation first gives its request up, and goes only if the server may hold it.
   */
  async send(message: JsonRpcMessage, run: (attempts: RequestAttempts | undefined) => Promise<void>): Promise<void> {
    if ('method' in message && 'id' in message) {
      const key = JSON.stringify(message.id);
      const attempts = new RequestAttempts(message.id, this.#maxOutageMs);
      this.#open.set(key, attempts);
      try {
        await run(attempts);
      } finally {
        if (this.#open.get(key) === attempts) this.#open.delete(key);
      }
      return;
    }
    const request = this.#open.get(cancelled(message) as string);
    if (request && !request.giveUp(this.#report)) return;
    await run(undefined);
  }
}
