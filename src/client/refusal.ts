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
