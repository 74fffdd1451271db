/**
 * The response half of the `node:http` adapter: a web-standard `Response` written to a
 * `ServerResponse` with backpressure, its body cancelled when the client goes away.
 */
import type { ServerResponse } from 'node:http';
import { sseSinkOf, type SseSink } from '../server/stream/sse-sink.js';

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
    if (res.req && !res.req.complete) {
      headers.connection = 'close';
      lingerAfterAnswer(res);
    }
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
      // false from res.write: a 'drain' follows once the socket has taken it.
      return open() && !res.write(text);
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
  if (!wrote)
    setImmediate(() => {
      if (!wrote && open()) res.flushHeaders();
    });
  await over;
  return true;
}

/**
 * How long a connection whose request body was refused keeps taking (and dropping) the
 * rest of it after the answer, ms. Bounded: the client chooses how much it sends.
 */
export const REFUSAL_LINGER_MS = 2_000;

/**
 * Closes the connection of a refused upload the way HTTP servers must (a "lingering
 * close"): the answer goes out with a FIN, and what the client still sends is read and
 * dropped for {@link REFUSAL_LINGER_MS}. Node's default, destroying the socket once the
 * answer is written, resets a connection whose client is still uploading, and a client
 * that meets the reset on its write (Node's net and undici do) drops the answer unread:
 * it then sees ECONNRESET or EPIPE instead of the refusal.
 */
function lingerAfterAnswer(res: ServerResponse): void {
  const socket = res.socket;
  if (!socket) return;
  // The server calls this once the answer is written (its connection: close); only this
  // socket's own copy is replaced.
  socket.destroySoon = function lingeringClose(this: typeof socket): void {
    if (this.writable) this.end();
    const timer = setTimeout(() => this.destroy(), REFUSAL_LINGER_MS);
    timer.unref();
    this.once('close', () => clearTimeout(timer));
  };
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
