/** Failures met while answering requests, reported to `onError` without flooding it. */
import { ContinuityError, toError } from '../protocol/errors.js';

/** A kind of failure met while answering requests (a store that cannot be read) is reported at most this often, ms. */
export const REQUEST_FAILURE_REPORT_MS = 10_000;

/** A reporter for errors that reach the endpoint: unexpected ones always, store failures once a while per kind. */
export function requestFailureReporter(onError: (error: Error) => void, now: () => number): (error: unknown) => void {
  /** When each kind of failure met while answering a request was last reported. */
  const reportedAt = new Map<string, number>();
  return (error) => {
    if (!(error instanceof ContinuityError)) return onError(toError(error));
    // A store that fails a request's own reads (a lookup, a session record) leaves no other
    // trace than the client's 503: reported too, once a while per kind, so that an outage
    // is seen, and is not a flood of one report per request.
    if (error.code !== 'store-unavailable' && error.code !== 'internal-error') return;
    const at = now();
    const last = reportedAt.get(error.code);
    if (last !== undefined && at - last < REQUEST_FAILURE_REPORT_MS) return;
    reportedAt.set(error.code, at);
    onError(error);
  };
}
