/**
 * The request half of the `node:http` adapter: an `IncomingMessage` as a web-standard
 * `Request`. Every conversion that can throw is refused with a coded error.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ContinuityError } from '../protocol/index.js';

/**
 * A Host header as RFC 3986 allows it: an IP literal or a registered name, then an
 * optional port. Anything else (spaces, userinfo, `%zz`, `<`, `^`…) is refused before
 * it reaches a URL parser.
 */
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})+)(?::[0-9]{1,5})?$/;

/** Methods a web `Request` cannot be built with. */
const FORBIDDEN_METHODS = new Set(['CONNECT', 'TRACE', 'TRACK']);

/**
 * The absolute URL of an incoming request, from its target and `Host`. A request
 * without `Host` (HTTP/1.0) is taken as `localhost`.
 * @throws ContinuityError `request-malformed` for a Host or target no URL can be built from.
 */
export function requestUrl(req: IncomingMessage): URL {
  const host = req.headers.host ?? 'localhost';
  if (!HOST.test(host)) throw malformed('Host');
  try {
    const url = new URL(req.url ?? '/', `http://${host}`);
    // A web Request refuses URLs with credentials; an absolute-form target may carry them.
    if (url.username !== '' || url.password !== '') throw malformed('request target');
    return url;
  } catch (error) {
    if (error instanceof ContinuityError) throw error;
    throw malformed('Host or request target');
  }
}

/** The request's headers, as a web `Headers`. @throws ContinuityError `request-malformed`. */
export function requestHeaders(req: IncomingMessage): Headers {
  const headers = new Headers();
  try {
    for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
      headers.append(req.rawHeaders[i] as string, req.rawHeaders[i + 1] as string);
    }
  } catch {
    throw malformed('header');
  }
  return headers;
}

/**
 * A `Request` for an incoming message. `body`, when given, replaces the message's own
 * body: the text a framework's body parser already read (the message stream is then
 * spent). It carries no abort signal of the connection: the endpoint never reads one (a
 * client that leaves is seen by its response, and by the body stream below), and linking
 * one costs every request an AbortController, a listener and a finalizer in undici.
 * @throws ContinuityError `request-malformed` or `method-not-allowed` for a request that
 *   cannot be represented as a web `Request`.
 */
export function toRequest(req: IncomingMessage, res: ServerResponse, body?: string): Request {
  const method = req.method ?? 'GET';
  if (FORBIDDEN_METHODS.has(method.toUpperCase())) throw new ContinuityError('method-not-allowed');
  const url = requestUrl(req);
  const headers = requestHeaders(req);
  const init: RequestInit & { duplex?: 'half' } = { method, headers };
  if (method !== 'GET' && method !== 'HEAD') {
    if (body !== undefined) {
      init.body = body;
      // The parser's text is what we send on; its length may differ from the wire's.
      headers.delete('content-length');
      headers.delete('content-encoding');
      headers.delete('transfer-encoding');
    } else {
      init.body = bodyStream(req, res);
      init.duplex = 'half';
    }
  }
  try {
    return new Request(url, init);
  } catch {
    throw malformed('request');
  }
}

/** Bytes buffered from a request body ahead of its reader. */
const BODY_HIGH_WATER = 64 * 1024;

/**
 * A request body as a web stream, with backpressure. A client that stops sending
 * mid-body is a malformed request (a coded error), not an internal one. A body nobody
 * reads to the end (a refusal) is drained and dropped; the response then closes its
 * connection, after a bounded linger (see `writeResponse`).
 */
function bodyStream(req: IncomingMessage, res: ServerResponse): ReadableStream<Uint8Array> {
  let open = true;
  const detach = (): void => {
    open = false;
    req.off('data', onData);
    req.resume();
  };
  let onData: (chunk: Buffer) => void = () => {};
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        onData = (chunk) => {
          if (!open) return;
          controller.enqueue(new Uint8Array(chunk));
          if ((controller.desiredSize ?? 0) <= 0) req.pause();
        };
        const fail = (): void => {
          if (!open) return;
          detach();
          controller.error(new ContinuityError('request-malformed', 'Bad Request: the request body ended early'));
        };
        if (req.readableEnded) {
          // Someone else read it already (a framework's parser): nothing left to stream.
          open = false;
          controller.close();
          return;
        }
        req.on('data', onData);
        req.once('end', () => {
          if (!open) return;
          open = false;
          controller.close();
        });
        req.on('error', fail);
        req.once('close', () => {
          if (!req.complete) fail();
        });
        res.once('close', () => {
          if (open) fail();
        });
      },
      pull() {
        if (open) req.resume();
      },
      cancel() {
        if (open) detach();
      },
    },
    { highWaterMark: BODY_HIGH_WATER, size: (chunk) => chunk.byteLength },
  );
}

function malformed(what: string): ContinuityError {
  return new ContinuityError('request-malformed', `Bad Request: malformed ${what}`);
}
