/**
 * Riding through a deploy window: a request that provably never reached a server (the
 * connection was refused or could not be made, or was found reset when the request was
 * written to it, so the server cannot hold it) is sent again with
 * backoff, and so is one the server refused before accepting it (503 with `Retry-After`
 * and one of our "not accepted, come back" reasons). Nothing the server may have accepted
 * is ever sent twice: a connection that failed after the request was written, or any
 * other answer, is the caller's to handle. An outage is reported once, not per attempt.
 */
import { ContinuityError } from '../protocol/errors.js';
import { reconnectDelay, MAX_SERVER_RETRY_MS, type ResolvedReconnect } from './backoff.js';
import { sleep } from './abort.js';
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

/** `Retry-After` in ms (seconds or an HTTP date), capped; undefined when absent or unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const seconds = Number(value);
  const ms = /^\d+$/.test(value.trim()) ? seconds * 1000 : Date.parse(value) - now;
  return Number.isFinite(ms) ? Math.min(Math.max(0, ms), MAX_SERVER_RETRY_MS) : undefined;
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
  /** Attempts stop (the last failure is returned or thrown) once this is true. */
  stopped(): boolean;
}

/**
 * Sends with `attempt()` until it is answered by something other than a retryable
 * not-accepted refusal, or `reconnect.maxRequestAttempts` attempts are spent. Throws
 * `server-unreachable` (retryable: nothing was sent) when every attempt was refused
 * before writing, and the fetch error itself when a connection failed after writing.
 */
export async function rideThrough(attempt: () => Promise<Response>, options: RideOptions): Promise<Response> {
  const { reconnect, signal, outage } = options;
  for (let n = 0; ; n++) {
    const last = n + 1 >= Math.max(1, reconnect.maxRequestAttempts) || options.stopped();
    let response: Response;
    try {
      response = await attempt();
    } catch (error) {
      if (!neverSent(error) || signal.aborted) throw error;
      // A stale keep-alive socket is no outage: the retry goes at once (the pool may hold
      // several such sockets, each found reset in turn, each an attempt of the bound).
      if (!last && foundReset(error)) continue;
      outage.failed(error);
      if (last) throw new ContinuityError('server-unreachable', undefined, { attempts: n + 1 }, { cause: error });
      await sleep(reconnectDelay(reconnect, n, undefined), signal, () => new ContinuityError('server-unreachable', 'Transport closed while waiting to retry'));
      continue;
    }
    outage.reached();
    const wait = response.status === 503 ? retryAfterMs(response.headers.get('retry-after')) : undefined;
    if (wait === undefined) return response;
    const text = await response.text().catch(() => '');
    const reason = refusalReason(text);
    const again = new Response(text, { status: response.status, statusText: response.statusText, headers: response.headers });
    if (last || reason === undefined || !NOT_ACCEPTED.has(reason)) return again;
    await sleep(reconnectDelay(reconnect, n, wait), signal, () => new ContinuityError('server-unreachable', 'Transport closed while waiting to retry'));
  }
}

/** `DELETE` of the session, riding through like any request; every failure typed. */
export async function endSession(attempt: () => Promise<Response>, options: RideOptions): Promise<void> {
  let response: Response;
  try {
    response = await rideThrough(attempt, options);
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
