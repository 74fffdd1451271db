/** Readers that never read: raw sockets that send a GET, take the first bytes, and stop reading. */
import { connect, type Socket } from 'node:net';

export interface IdleReader {
  socket: Socket;
  /** Resolves with the first bytes the server sent (status line and headers, at least). */
  firstBytes: Promise<string>;
}

export function openIdleReader(url: URL, headers: Record<string, string>): IdleReader {
  const socket = connect(Number(url.port), url.hostname);
  const lines = [`GET ${url.pathname} HTTP/1.1`, `Host: ${url.host}`, 'Accept: text/event-stream'];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  const firstBytes = new Promise<string>((resolve, reject) => {
    socket.once('data', (chunk: Buffer) => {
      // Never read again: the kernel buffers fill, then the server sees backpressure.
      socket.pause();
      resolve(chunk.toString('latin1'));
    });
    socket.once('error', reject);
    socket.once('close', () => reject(new Error('closed before any byte')));
  });
  firstBytes.catch(() => {});
  return { socket, firstBytes };
}
