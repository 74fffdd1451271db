/** Raw bytes over a TCP socket: for requests no HTTP client would send. */
import { connect } from 'node:net';

export interface RawAnswer {
  /** Status of the first response line, or 0 if the server sent none before closing. */
  status: number;
  text: string;
  /** The first response's body (de-chunked), as far as it arrived. */
  body: string;
  /** The server neither answered nor closed within the deadline (we closed). */
  timedOut: boolean;
}

/**
 * Writes `bytes` to `port`, half-closes, and collects what comes back until the server
 * closes or `deadlineMs` passes (then the socket is destroyed). Never rejects.
 */
export function rawExchange(port: number, bytes: string | Uint8Array, deadlineMs = 5_000, endAfterWrite = true): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (timedOut: boolean): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1];
      resolve({ status: status === undefined ? 0 : Number(status), text, body: bodyOf(text), timedOut });
    };
    const timer = setTimeout(() => finish(true), deadlineMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', () => finish(false));
    socket.on('close', () => finish(false));
    socket.on('connect', () => {
      socket.write(bytes);
      if (endAfterWrite) socket.end();
    });
  });
}

/** Resolves with the first response's status line and headers, then destroys the socket. */
export function rawHead(port: number, bytes: string, deadlineMs = 5_000): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    let done = false;
    const finish = (timedOut: boolean): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1];
      resolve({ status: status === undefined ? 0 : Number(status), text, body: '', timedOut });
    };
    const timer = setTimeout(() => finish(true), deadlineMs);
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      text += chunk;
      if (text.includes('\r\n\r\n')) finish(false);
    });
    socket.on('error', () => finish(false));
    socket.on('close', () => finish(false));
    socket.on('connect', () => socket.write(bytes));
  });
}

/** The body of the first response in `text`, de-chunked when it is chunked. */
function bodyOf(text: string): string {
  const split = text.indexOf('\r\n\r\n');
  if (split < 0) return '';
  const head = text.slice(0, split).toLowerCase();
  let rest = text.slice(split + 4);
  if (!/\r\ntransfer-encoding: *chunked/.test(head)) return rest;
  let out = '';
  for (;;) {
    const line = rest.indexOf('\r\n');
    if (line < 0) return out;
    const size = parseInt(rest.slice(0, line), 16);
    if (!(size > 0)) return out;
    out += rest.slice(line + 2, line + 2 + size);
    rest = rest.slice(line + 2 + size + 2);
  }
}
