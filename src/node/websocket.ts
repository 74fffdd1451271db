/**
 * The WebSocket half of the Node adapter: `upgrade` events go to the endpoint, which
 * decides; `ws` performs the RFC 6455 handshake and framing. A refusal is written as a
 * plain HTTP response with the JSON-RPC error body of the error table.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Endpoint } from '../server/endpoint.js';
import type { SocketPort } from '../server/event-sink.js';

/** Handles `server.on('upgrade', …)` for `endpoint` on `path`. */
export function upgradeHandler(endpoint: Endpoint, path: string, maxPayload: number): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  // noServer: we decide each handshake ourselves before ws completes it.
  const wss = new WebSocketServer({ noServer: true, maxPayload, handleProtocols: (protocols) => chosen(protocols) });
  return (req, socket, head) => {
    socket.on('error', () => socket.destroy());
    const pathname = (req.url ?? '/').split('?')[0];
    if (pathname !== path) {
      writeRefusal(socket, 404, 'text/plain', 'Not Found');
      return;
    }
    const request = upgradeRequest(req);
    void endpoint.upgrade(request).then(async (decision) => {
      if (!decision.ok) {
        writeRefusal(socket, decision.response.status, decision.response.headers.get('content-type') ?? 'text/plain', await decision.response.text());
        return;
      }
      wss.handleUpgrade(req, socket, head, (ws) => {
        void decision.attach(wsPort(ws));
      });
    });
  };
}

function chosen(protocols: Set<string>): string | false {
  // The endpoint already insisted on mcp.v1 being offered; echo it.
  return protocols.has('mcp.v1') ? 'mcp.v1' : false;
}

function upgradeRequest(req: IncomingMessage): Request {
  const headers = new Headers();
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i] as string, req.rawHeaders[i + 1] as string);
  return new Request(new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`), { method: 'GET', headers });
}

function writeRefusal(socket: Duplex, status: number, type: string, body: string): void {
  const bytes = Buffer.byteLength(body);
  socket.end(`HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}\r\nContent-Type: ${type}\r\nContent-Length: ${bytes}\r\nConnection: close\r\n\r\n${body}`);
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request', 403: 'Forbidden', 404: 'Not Found', 409: 'Conflict', 410: 'Gone', 503: 'Service Unavailable',
};

/** A `ws` socket as the core's SocketPort. */
export function wsPort(ws: WebSocket): SocketPort {
  return {
    send: (text) => ws.send(text),
    close: (code, reason) => ws.close(code, reason),
    get bufferedAmount() {
      return ws.bufferedAmount;
    },
    onMessage: (listener) => ws.on('message', (data, isBinary) => {
      // JSON-RPC travels as text frames; a binary frame is a protocol error (1003).
      if (isBinary) ws.close(1003, 'text frames only');
      else listener(data.toString());
    }),
    onClose: (listener) => ws.once('close', () => listener()),
  };
}
