/**
 * `node:http` ⇄ web-standard `Request`/`Response`. Thin on purpose: the endpoint does the
 * protocol; this converts, streams with backpressure, and cancels the response body when
 * the client goes away so the session learns its reader is gone.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';

/** A `Request` for an incoming message. Its signal aborts if the client disconnects. */
export function toRequest(req: IncomingMessage, res: ServerResponse): Request {
  const headers = new Headers();
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    headers.append(req.rawHeaders[i] as string, req.rawHeaders[i + 1] as string);
  }
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  const method = req.method ?? 'GET';
  const hasBody = method !== 'GET' && method !== 'HEAD';
  const init: RequestInit & { duplex?: 'half' } = { method, headers, signal: controller.signal };
  if (hasBody) {
    init.body = Readable.toWeb(req) as ReadableStream<Uint8Array>;
    init.duplex = 'half';
  }
  return new Request(new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`), init);
}

/** Writes a `Response` to `res`, honouring backpressure; cancels the body if the client leaves. */
export async function writeResponse(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, key) => {
    headers[key] = value;
  });
  res.writeHead(response.status, headers);
  if (!response.body) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  // Headers and a first chunk that is already there (a priming event) leave in one write;
  // a stream with nothing to say yet gets its headers at once, not with its first event.
  const first = reader.read();
  const ready = await Promise.race([first, new Promise<null>((resolve) => setImmediate(() => resolve(null)))]);
  if (ready === null) res.flushHeaders();
  const onClose = (): void => {
    void reader.cancel().catch(() => {});
  };
  res.once('close', onClose);
  try {
    for (let next = first; ; next = reader.read()) {
      const { done, value } = await next;
      if (done) break;
      if (!res.write(value)) await drained(res);
      if (res.destroyed) break;
    }
    if (!res.destroyed) res.end();
  } catch {
    res.destroy();
  } finally {
    res.off('close', onClose);
  }
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
