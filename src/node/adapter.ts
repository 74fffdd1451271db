/**
 * `node:http` ⇄ web-standard `Request`/`Response`. Thin on purpose: the endpoint does the
 * protocol; this converts, streams with backpressure, and cancels the response body when
 * the client goes away so the session learns its reader is gone.
 *
 * Nothing a client sends may end the process: every conversion that can throw is
 * refused with a coded error, and nothing here returns a promise that can reject.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ContinuityError } from '../protocol/index.js';
import type { Endpoint, HandleContext } from '../server/index.js';
import { refusal, toRefusal } from '../server/stream/http.js';
import { toRequest } from './request.js';
import { writeResponse } from './response.js';

export { requestHeaders, requestUrl, toRequest } from './request.js';
export { writeResponse } from './response.js';

/** `context`, with the peer's address as `client` unless the host named one. */
function withClient(context: HandleContext | undefined, req: IncomingMessage): HandleContext | undefined {
  const address = req.socket.remoteAddress;
  if (context?.client !== undefined || address === undefined) return context;
  return { ...context, client: address };
}

/**
 * Answers one `node:http` request with `endpoint`: converts it, handles it, writes the
 * response. Never rejects; a request that cannot be converted gets its refusal.
 * `context` may be a function of the request (say, deriving the principal from it).
 */
export async function serveNode(
  endpoint: Endpoint,
  req: IncomingMessage,
  res: ServerResponse,
  context?: HandleContext | ((req: IncomingMessage) => HandleContext | Promise<HandleContext>),
  body?: string,
): Promise<void> {
  let response: Response;
  try {
    const request = toRequest(req, res, body);
    response = await endpoint.handle(request, withClient(typeof context === 'function' ? await context(req) : context, req));
  } catch (error) {
    response = error instanceof ContinuityError ? refusal(error) : toRefusal(error);
  }
  // A draining process is going away: a connection kept alive now could carry the client's
  // next request to a socket closing under it, where nobody can tell whether it was read.
  if (endpoint.draining) res.setHeader('connection', 'close');
  await writeResponse(res, response);
}
