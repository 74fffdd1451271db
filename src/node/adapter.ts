/**
 * `node:http` ⇄ web-standard `Request`/`Response`. Thin on purpose: the endpoint does the
 * protocol; this converts, streams with backpressure, and cancels the response body when
 * the client goes away so the session learns its reader is gone.
 *
 * Nothing a client sends may end the process: every conversion that can throw is
 * refused with a coded error, and nothing here returns a promise that can reject.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ContinuityError } from '../protocol/errors.js';
import type { Endpoint } from '../server/endpoint.js';
import { refusal, toRefusal } from '../server/stream/http.js';
import type { HandleContext } from '../server/options.js';
import { sseSinkOf, type SseSink } from '../server/stream/sse-sink.js';

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
 * A `Request` for an incoming message. Its signal aborts if the client disconnects.
 * `body`, when given, replaces the message's own body: the text a framework's body
 * parser already read (the message stream is then spent).
 * @throws ContinuityError `request-malformed` or `method-not-allowed` for a request that
 *   cannot be represented as a web `Request`.
 */
export function toRequest(req: IncomingMessage, res: ServerResponse, body?: string): Request {
  const method = req.method ?? 'GET';
  if (FORBIDDEN_METHODS.has(method.toUpperCase())) throw new ContinuityError('method-not-allowed');
  const url = requestUrl(req);
  const headers = requestHeaders(req);
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  const init: RequestInit & { duplex?: 'half' } = { method, headers, signal: controller.signal };
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
 * reads to the end (a refusal) is drained and dropped once the response is done; the
 * response then closes its connection.
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
    response = await endpoint.handle(request, typeof context === 'function' ? await context(req) : context);
  } catch (error) {
    response = error instanceof ContinuityError ? refusal(error) : toRefusal(error);
  }
  await writeResponse(res, response);
}

/**
 * Writes a `Response` to `res`, honouring backpressure. Never rejects.
 * - The client leaves: the body is cancelled (the session learns its reader is gone).
 * - The body errors (the server cut this reader): the socket is destroyed at once,
 *   dropping what is queued for it instead of waiting for a reader that may never read.
 */
export async function writeResponse(res: ServerResponse, response: Response): Promise<void> {
  const reader = response.body?.getReader();
  // Observed once, so a body that errors while nobody awaits it is not an unhandled rejection.
  reader?.closed.catch(() => {});
  const release = (): void => {
    void reader?.cancel().catch(() => {});
  };
  res.once('close', release);
  try {
    if (res.destroyed) return;
    const headers: Record<string, string> = {};
    response.headers.forEach((value, key) => {
      headers[key] = value;
    });
    // A request whose body was never read (a refusal) cannot keep its connection.
    if (res.req && !res.req.complete) headers.connection = 'close';
    res.writeHead(response.status, headers);
    if (!reader) {
      res.end();
      return;
    }
    const sink = sseSinkOf(response.body);
    if (sink && (await writeDirect(res, reader, sink))) return;
    // Headers and a first chunk that is already there (a priming event) leave in one write;
    // a stream with nothing to say yet gets its headers at once, not with its first event.
    const first = reader.read();
    const ready = await Promise.race([first, new Promise<null>((resolve) => setImmediate(() => resolve(null)))]);
    if (ready === null && !res.destroyed) res.flushHeaders();
    for (let next = first; ; next = reader.read()) {
      const { done, value } = await next;
      if (done || res.destroyed) break;
      if (!res.write(value)) await drainedOrCut(res, reader);
      if (res.destroyed) break;
    }
    if (!res.destroyed) res.end();
  } catch {
    res.destroy();
  } finally {
    res.off('close', release);
    if (res.destroyed) release();
  }
}

/**
 * Hands the response to the SSE sink behind the body: what the body stream already holds
 * (a priming event) goes first, then the sink writes straight to `res` (see
 * `SseSink.attach`). Resolves true once the response is over; false, having attached
 * nothing, when the sink ended first (the caller's loop then writes what the stream has left).
 */
async function writeDirect(res: ServerResponse, reader: ReadableStreamDefaultReader<Uint8Array>, sink: SseSink): Promise<boolean> {
  let wrote = false;
  while (!sink.ended && sink.bodyQueuedBytes > 0) {
    const { done, value } = await reader.read();
    if (done || res.destroyed) return false;
    res.write(value);
    wrote = true;
  }
  if (sink.ended || res.destroyed) return false;
  const over = new Promise<void>((resolve) => res.once('close', resolve));
  const open = (): boolean => !res.destroyed && !res.writableEnded;
  sink.attach({
    write: (text) => {
      wrote = true;
      if (open()) res.write(text);
    },
    get queuedBytes() {
      return res.writableLength;
    },
    end: () => {
      if (open()) res.end();
    },
    destroy: () => void res.destroy(),
    onDrain: (listener) => void res.on('drain', listener),
    onClose: (listener) => void res.once('close', listener),
  });
  // A stream with nothing to say yet gets its headers now, not with its first event.
  // (`headersSent` is already true after `writeHead`, so the sink's writes are what tell.)
  if (!wrote) setImmediate(() => {
    if (!wrote && open()) res.flushHeaders();
  });
  await over;
  return true;
}

/** Resolves when `res` drains or closes; rejects as soon as the body errors (a cut). */
function drainedOrCut(res: ServerResponse, reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
  if (res.destroyed) return Promise.resolve();
  let settle!: () => void;
  const drained = new Promise<void>((resolve) => {
    settle = resolve;
    res.on('drain', settle);
    res.on('close', settle);
  });
  // A body that closes normally while we wait changes nothing: its bytes still have to go out.
  const cut = reader.closed.then(() => drained);
  return Promise.race([drained, cut]).finally(() => {
    res.off('drain', settle);
    res.off('close', settle);
  });
}

function malformed(what: string): ContinuityError {
  return new ContinuityError('request-malformed', `Bad Request: malformed ${what}`);
}
