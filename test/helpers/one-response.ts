/**
 * A `node:http` server on an ephemeral loopback port that answers each request by writing
 * `body` through the Node adapter's `writeResponse`, for tests of that adapter over real sockets.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeResponse } from '../../src/node/adapter.js';

export interface OneResponse {
  server: Server;
  port: number;
  /** The response, once a request has arrived. */
  res: Promise<ServerResponse>;
  /** Settles when `writeResponse` returns. */
  written: Promise<void>;
}

/** Serves `body` as an SSE response; `before` runs when the request arrives, before the write starts. */
export async function serveResponse(body: ReadableStream<Uint8Array>, before?: () => void): Promise<OneResponse> {
  let resolveRes!: (res: ServerResponse) => void;
  const res = new Promise<ServerResponse>((resolve) => (resolveRes = resolve));
  let resolveWritten!: () => void;
  const written = new Promise<void>((resolve) => (resolveWritten = resolve));
  const server = createServer((_req, r) => {
    resolveRes(r);
    before?.();
    void writeResponse(r, new Response(body, { headers: { 'content-type': 'text/event-stream' } })).then(resolveWritten);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, res, written };
}
