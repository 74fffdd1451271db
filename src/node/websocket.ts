/**
 * The WebSocket half of the Node adapter: `upgrade` events go to the endpoint, which
 * decides; `ws` performs the RFC 6455 handshake and framing. A refusal is written as a
 * plain HTTP response with the JSON-RPC error body of the error table.
 *
 * The exported signatures use structural types of our own, not `ws`'s: users need no
 * `@types/ws` to compile against them.
 */
import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { ContinuityError, DEFAULT_MAX_FRAME_BYTES, WS_SUBPROTOCOL } from '../protocol/index.js';
import type { Endpoint, HandleContext } from '../server/index.js';
import type { SocketPort } from '../server/stream/event-sink.js';
import { refusal, toRefusal } from '../server/stream/http.js';
import { requestHeaders, requestUrl } from './adapter.js';
import { contextOf, type RequestIdentity } from './identity.js';

/** Largest WebSocket frame accepted after an upgrade, by default (4 MiB). */
export { DEFAULT_MAX_FRAME_BYTES };

/** Options of {@link upgradeHandler}. */
export interface UpgradeHandlerOptions extends RequestIdentity {
  /** Path the endpoint answers on (default `/mcp`); handshakes elsewhere get 404. */
  path?: string | undefined;
  /** Largest WebSocket frame accepted from a client, bytes (default 4 MiB); a larger one closes with 1009. */
  maxFrameBytes?: number | undefined;
}

/** The part of a `ws` WebSocket that {@link wsPort} uses. */
export interface WebSocketLike {
  readonly bufferedAmount: number;
  send(data: string, callback?: (error?: Error) => void): void;
  close(code?: number, reason?: string): void;
  on(event: 'message', listener: (data: { toString(): string }, isBinary: boolean) => void): unknown;
  once(event: 'close', listener: () => void): unknown;
}

/**
 * Handles `server.on('upgrade', …)` for `endpoint`: attach it to any `node:http` server,
 * including the one under Express or Fastify. Never throws, whatever the request.
 *
 * @example
 * ```ts
 * const server = app.listen(3000);
 * server.on('upgrade', upgradeHandler(endpoint, { path: '/mcp' }));
 * ```
 */
export function upgradeHandler(
  endpoint: Endpoint,
  options: UpgradeHandlerOptions | string = {},
  /** With a path as the second argument (the older form): the frame limit. */
  maxFrameBytes?: number,
): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  if (typeof options === 'string') options = { path: options, maxFrameBytes };
  const path = options.path ?? '/mcp';
  const context = contextOf(options);
  // noServer: we decide each handshake ourselves before ws completes it.
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: options.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES,
    handleProtocols: (protocols) => (protocols.has(WS_SUBPROTOCOL) ? WS_SUBPROTOCOL : false),
  });
  return (req, socket, head) => {
    socket.on('error', () => socket.destroy());
    const pathname = (req.url ?? '/').split('?')[0];
    if (pathname !== path) {
      writeRefusal(socket, 404, 'text/plain', 'Not Found');
      return;
    }
    void decide(endpoint, req, context)
      .then(async (decision) => {
        if (!decision.ok) {
          writeRefusal(socket, decision.response.status, decision.response.headers.get('content-type') ?? 'text/plain', await decision.response.text());
          return;
        }
        if (socket.destroyed) return;
        wss.handleUpgrade(req, socket, head, (ws) => {
          // Bad frames (too big, invalid UTF-8) make ws emit 'error', then close: never a crash.
          ws.on('error', () => {});
          decision.attach(wsPort(ws)).catch(() => ws.close(1011, 'internal-error'));
        });
      })
      .catch(() => socket.destroy());
  };
}

type Decision = Awaited<ReturnType<Endpoint['upgrade']>>;

async function decide(endpoint: Endpoint, req: IncomingMessage, context: ((req: IncomingMessage) => Promise<HandleContext>) | undefined): Promise<Decision> {
  try {
    const request = new Request(requestUrl(req), { method: 'GET', headers: requestHeaders(req) });
    return await endpoint.upgrade(request, context ? await context(req) : undefined);
  } catch (error) {
    return { ok: false, response: error instanceof ContinuityError ? refusal(error) : toRefusal(error) };
  }
}

function writeRefusal(socket: Duplex, status: number, type: string, body: string): void {
  if (socket.destroyed) return;
  const bytes = Buffer.byteLength(body);
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\nContent-Type: ${type}\r\nContent-Length: ${bytes}\r\nConnection: close\r\n\r\n${body}`);
}

/** A `ws` socket as the core's SocketPort. */
export function wsPort(ws: WebSocketLike): SocketPort {
  const drains: Array<() => void> = [];
  // Runs once a frame has been written to the socket (or failed): the queue went down.
  const sent = (): void => {
    for (const listener of drains) listener();
  };
  return {
    write: (text) => {
      ws.send(text, sent);
      return true;
    },
    get queuedBytes() {
      return ws.bufferedAmount;
    },
    end: () => ws.close(1000, 'closing'),
    destroy: () => ws.close(1000, 'closing'),
    close: (code, reason) => ws.close(code, reason),
    onDrain: (listener) => void drains.push(listener),
    onMessage: (listener) =>
      ws.on('message', (data, isBinary) => {
        // JSON-RPC travels as text frames; a binary frame is a protocol error (1003).
        if (isBinary) ws.close(1003, 'text frames only');
        else listener(data.toString());
      }),
    onClose: (listener) => ws.once('close', () => listener()),
  };
}
