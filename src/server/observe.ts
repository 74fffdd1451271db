/**
 * What the endpoint tells its observer about each answered request: refusals by code, and
 * every resume's outcome. Kept out of the router so that it stays one call per place.
 */
import { ContinuityError } from '../protocol/errors.js';
import { Header } from '../protocol/headers.js';
import type { RequestId } from '../protocol/jsonrpc.js';
import type { ServerObserver } from '../telemetry/server.js';

/** A request was answered with a refusal made from `error`. */
export function observeRefusal(observer: ServerObserver, request: Request, error: unknown, requestId: RequestId | null): void {
  const refused = error instanceof ContinuityError ? error : new ContinuityError('internal-error');
  const sessionId = request.headers.get(Header.SessionId);
  const cursor = request.method === 'GET' ? request.headers.get(Header.LastEventId) : null;
  observer.refusal(refused.code, refused.status, request, { sessionId, requestId, lastEventId: cursor });
  if (cursor !== null) observer.resume(sessionId ?? '', cursor, refused.code);
}

/** A request was answered: a resume, when it was a GET with a cursor that got a stream. */
export function observeStream(observer: ServerObserver, request: Request, response: Response): Response {
  const cursor = request.method === 'GET' ? request.headers.get(Header.LastEventId) : null;
  if (cursor !== null && response.ok) observer.resume(request.headers.get(Header.SessionId) ?? '', cursor, 'resumed');
  return response;
}
