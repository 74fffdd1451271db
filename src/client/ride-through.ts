/**
 * Riding through a deploy window: a request that provably never reached a server (the
 * connection was refused or could not be made, or was found reset when the request was
 * written to it, so the server cannot hold it) is sent again with
 * backoff, and so is one the server refused before accepting it (503 with `Retry-After`
 * and one of our "not accepted, come back" reasons). Nothing the server may have accepted
 * is ever sent twice: a connection that failed after the request was written, or any
 * other answer, is the caller's to handle. An outage is reported once, not per attempt. Each
 * message waits through an outage within a total bound (./outage-budget.ts), and not at all
 * once the application gave it up (./give-up.ts).
 */
import { ContinuityError } from '../protocol/errors.js';
import { reconnectDelay, MAX_SERVER_RETRY_MS, type ResolvedReconnect } from './backoff.js';
import { sleep } from './abort.js';
import type { RequestAttempts } from './give-up.js';
import { OutageBudget } from './outage-budget.js';
import { refusalError, refusalReason } from './refusal.js';

/** Connection errors that happen before a byte of the request is written. */
const NEVER_SENT = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT']);

/**
 * Errors the kernel gives on *writing* to a connection that was already reset: a keep-alive
 * socket the server (or a proxy) reset while it was idle, the reset arriving before the
 * request was written. The write failed, so the server cannot hold the whole request.
 * A close seen on *reading* (`UND_ERR_SOCKET` "other side closed", or a read reset) is not
 * one of these: the request was written, and whether the server read it cannot be told.
 */
const WRITE_REFUSED = new Set(['ECONNRESET', 'EPIPE']);

/** Refusals our server gives before it accepts a request, that a later attempt may pass. */
const NOT_ACCEPTED = new Set(['store-unavailable', 'server-busy', 'session-limit', 'server-draining', 'endpoint-closed', 'owner-unavailable']);

/** Does `error` or one of its causes (fetch wraps undici's, which wraps the socket's) pass `test`? */
function anyCause(error: unknown, test: (e: { code?: unknown; syscall?: unknown; errors?: unknown }) => boolean): boolean {
  for (let e: unknown = error, depth = 0; e !== undefined && e !== null && depth < 4; depth++) {
    if (test(e)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** The request was written to a kept-alive connection already reset: a stale socket, not a server down. */
export function foundReset(error: unknown): boolean {
  return anyCause(error, (e) => e.syscall === 'write' && typeof e.code === 'string' && WRITE_REFUSED.has(e.code));
}

/** Did this `fetch` failure happen before the request was written (so the server never saw it)? */
export function neverSent(error: unknown): boolean {
  return (
    foundReset(error) ||
    anyCause(error, (e) => {
      if (typeof e.code === 'string' && NEVER_SENT.has(e.code)) return true;
      // AggregateError (several addresses tried): never sent if none of them connected.
      return Array.isArray(e.errors) && e.errors.length > 0 && e.errors.every((x) => neverSent(x));
    })
  );
}

/**
 * `Retry-After` in ms (seconds or an HTTP date), capped at `cap`; undefined when absent or
 * unreadable. A negative value or a date past is 0: never a reason to spin (backoff applies).
 */
export function retryAfterMs(value: string | null, now = Date.now(), cap = MAX_SERVER_RETRY_MS): number | undefined {
  if (value === null) return undefined;
  const seconds = Number(value);
  const ms = /^\d+$/.test(value.trim()) ? seconds * 1000 : Date.parse(value) - now;
  return Number.isFinite(ms) ? Math.min(Math.max(0, ms), cap) : undefined;
}

/** Tells the application about an outage once, when it begins. */
export class Outage {
  #down = false;
  readonly #report: (error: Error) => void;
  constructor(report: (error: Error) => void) {
    this.#report = report;
  }
  /** A request failed to reach the server; reported only if the server was reachable before. */
  failed(error: unknown): void {
    if (this.#down) return;
    this.#down = true;
    this.#report(error instanceof ContinuityError ? error : new ContinuityError('server-unreachable', undefined, undefined, { cause: error }));
  }
  /** The server answered something: the outage, if any, is over. */
  reached(): void {
    this.#down = false;
  }
}

export interface RideOptions {
  readonly reconnect: ResolvedReconnect;
  readonly signal: AbortSignal;
  readonly outage: Outage;
  /** The message's bound on its wait through an outage (`reconnect.maxOutageMs`). */
  readonly budget: OutageBudget;
  /** The request's attempts (undefined for notifications and `DELETE`): no attempt once it is given up. */
  readonly request?: RequestAttempts | undefined;
  /** Attempts stop (the last failure is returned or thrown) once this is true. */
  stopped(): boolean;
}

/**
 * Sends with `attempt()` until it is answered by something other than a retryable
 * not-accepted refusal, `reconnect.maxRequestAttempts` attempts are spent, the outage budget
 * is, or the application gave the request up. Throws `server-unreachable` (retryable:
 * nothing was sent) when every attempt was refused before writing, and the fetch error
 * itself when a connection failed after writing; returns the last refusal when the server
 * kept refusing.
 */
export async function rideThrough(attempt: () => Promise<Response>, options: RideOptions): Promise<Response> {
  const { reconnect, signal, outage, budget, request } = options;
  const wait = (ms: number): Promise<void> =>
    sleep(ms, [signal, request?.signal], () =>
      request?.givenUp ? request.neverSent() : new ContinuityError('server-unreachable', 'Transport closed while waiting to retry'),
    );
  for (let n = 0; ; n++) {
    // Checked before every attempt, a recovery's second POST of the request included.
    if (request?.givenUp) throw request.neverSent();
    const last = n + 1 >= Math.max(1, reconnect.maxRequestAttempts) || options.stopped();
    let response: Response;
    request?.begin();
    try {
      response = await attempt();
    } catch (error) {
      const unsent = neverSent(error);
      request?.end(!unsent);
      if (!unsent || signal.aborted) throw error;
      if (request?.givenUp) throw request.neverSent();
      // A stale keep-alive socket is no outage: the retry goes at once (the pool may hold
      // several such sockets, each found reset in turn, each an attempt of the bound).
      if (!last && foundReset(error)) continue;
      outage.failed(error);
      budget.failed();
      const ms = last ? undefined : budget.next(reconnectDelay(reconnect, n, undefined));
      if (ms === undefined) throw new ContinuityError('server-unreachable', undefined, { attempts: n + 1, outageMs: budget.spentMs }, { cause: error });
      await wait(ms);
      continue;
    }
    outage.reached();
    // Uncapped, to compare with what is left of the budget; the wait itself is capped below.
    const asked = response.status === 503 ? retryAfterMs(response.headers.get('retry-after'), Date.now(), Infinity) : undefined;
    if (asked === undefined) {
      request?.end(true);
      return response;
    }
    const text = await response.text().catch(() => '');
    const reason = refusalReason(text);
    const again = new Response(text, { status: response.status, statusText: response.statusText, headers: response.headers });
    const notAccepted = reason !== undefined && NOT_ACCEPTED.has(reason);
    request?.end(!notAccepted);
    if (!notAccepted) return again;
    if (request?.givenUp) throw request.neverSent();
    budget.failed();
    const ms = last ? undefined : budget.next(reconnectDelay(reconnect, n, asked), asked);
    if (ms === undefined) return again;
    await wait(ms);
  }
}

/** `DELETE` of the session, riding through like any request; every failure typed. */
export async function endSession(attempt: () => Promise<Response>, options: Omit<RideOptions, 'budget'>): Promise<void> {
  let response: Response;
  try {
    response = await rideThrough(attempt, { ...options, budget: new OutageBudget(options.reconnect.maxOutageMs) });
  } catch (error) {
    if (error instanceof ContinuityError) throw error;
    throw new ContinuityError('stream-lost', `DELETE failed before an answer: ${(error as Error).message}`, undefined, { cause: error });
  }
  // 404: already gone; 405: the server does not let clients end sessions (the spec allows it).
  if (!response.ok && response.status !== 404 && response.status !== 405) {
    const text = await response.text().catch(() => '');
    throw refusalError(response.status, text, () => new ContinuityError('response-invalid', `DELETE answered HTTP ${response.status}`));
  }
  await response.body?.cancel();
}
