/** Reading a server's refusal body: the error table's `error.data.reason`, typed. */
import { ContinuityError, isErrorCode } from '../protocol/errors.js';

/** `error.data.reason` of a JSON-RPC error body, if it has one. */
export function refusalReason(text: string): string | undefined {
  try {
    const reason = (JSON.parse(text) as { error?: { data?: { reason?: unknown } } }).error?.data?.reason;
    return typeof reason === 'string' ? reason : undefined;
  } catch {
    return undefined;
  }
}

/** A typed error for a refusal when its reason is one of ours; `fallback` otherwise. */
export function refusalError(status: number, text: string, fallback: () => Error): Error {
  const reason = refusalReason(text);
  if (isErrorCode(reason)) return new ContinuityError(reason, undefined, { status });
  return fallback();
}

/**
 * Does a rejection name the session as its cause? Some servers answer an unknown session
 * with 400, not 404 (the official server-everything: "Bad Request: No valid session ID
 * provided"). Only a 400 or 404 whose JSON-RPC error message speaks of the session as
 * missing or invalid counts: the server refused before running anything of the request.
 */
export function namesSession(status: number, text: string): boolean {
  if (status !== 400 && status !== 404) return false;
  let message: unknown = text;
  try {
    message = (JSON.parse(text) as { error?: { message?: unknown } }).error?.message;
  } catch {
    // Not JSON: read the text as it is.
  }
  if (typeof message !== 'string') return false;
  return /session/i.test(message) && /\b(no valid|invalid|unknown|not found|expired|missing|required)\b/i.test(message);
}

/** The typed error of a 404 for the session: its own reason when it gives one of ours (`session-not-rebuildable`, `store-regressed`). */
export function goneError(text: string): ContinuityError {
  const reason = refusalReason(text);
  return new ContinuityError(reason === 'session-not-rebuildable' || reason === 'store-regressed' ? reason : 'session-not-found');
}

/** Does `error` say the server no longer knows the session (so it ran nothing of it)? */
export function sessionGone(error: ContinuityError): boolean {
  // store-regressed: the server ended the session because its store lost writes.
  if (error.code === 'session-not-found' || error.code === 'store-regressed' || error.code === 'session-not-rebuildable') return true;
  return error.code === 'session-invalid' && error.detail?.status === 404;
}
