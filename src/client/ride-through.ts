/**
 * Riding through a deploy window: a request that provably never reached a server (the
 * connection was refused or could not be made, so nothing was written) is sent again with
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

/** Refusals our server gives before it accepts a request, that a later attempt may pass. */
const NOT_ACCEPTED = new Set(['store-unavailable', 'server-busy', 'session-limit', 'server-draining', 'endpoint-closed', 'owner-unavailable']);

/** Did this `fetch` failure happen before the request was written (so the server never saw it)? */
export function neverSent(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e !== undefined && e !== null && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && NEVER_SENT.has(code)) return true;
    // AggregateError (several addresses tried): never sent if none of them connected.
    const errors = (e as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors.length > 0 && errors.every((x) => neverSent(x))) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
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
