/**
 * The client side of the SSE→WebSocket upgrade (docs/design.md §4): given the server's
 * `upgrade-accepted` offer, open the socket (`ws`, subprotocol `mcp.v1`, the session and
 * the token in headers) and carry JSON-RPC as text frames. A refused handshake reports
 * the server's reason; any close after opening means the session is over (superseded).
 */
import WebSocket from 'ws';
import { ContinuityError, toError } from '../protocol/errors.js';
import { refusalError } from './refusal.js';
import { UPGRADE_TOKEN_HEADER, WS_SUBPROTOCOL } from '../protocol/headers.js';
import type { JsonRpcMessage } from '../protocol/jsonrpc.js';
import type { SocketChannel, SocketHandlers, UpgradeOffer } from './socket-offer.js';

export { isUpgradeOffer, type SocketChannel, type SocketHandlers, type UpgradeOffer } from './socket-offer.js';

/** Opens the upgraded socket; rejects with a typed error if the handshake is refused or fails. */
export function openSocket(url: URL, headers: Headers, offer: UpgradeOffer, handlers: SocketHandlers, maxPayload: number): Promise<SocketChannel> {
  const wsUrl = new URL(url);
  wsUrl.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  const h: Record<string, string> = {};
  headers.forEach((value, key) => {
    h[key] = value;
  });
  h[UPGRADE_TOKEN_HEADER] = offer.token;
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(wsUrl, WS_SUBPROTOCOL, { headers: h, maxPayload, handshakeTimeout: Math.max(1000, offer.expiresInMs) });
    let open = false;
    let closing = false;
    ws.once('unexpected-response', (_req, res) => {
      // A refusal: read the error table's reason from the body.
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (body.length < 4096) body += chunk;
      });
      res.on('end', () => {
        const status = res.statusCode ?? 0;
        reject(refusalError(status, body, () => new ContinuityError('session-superseded', `WebSocket upgrade refused: HTTP ${status}`, { status })));
        ws.terminate();
      });
    });
    ws.once('open', () => {
      open = true;
      resolve({
        send: (message) => ws.send(JSON.stringify(message)),
        close: () => {
          closing = true;
          ws.close(1000, 'client closing');
        },
      });
    });
    ws.on('message', (data, isBinary) => {
      if (isBinary) return handlers.onError(new ContinuityError('inbound-message-invalid', 'Ignoring a binary WebSocket frame'));
      try {
        handlers.onMessage(JSON.parse((data as Buffer).toString('utf8')) as JsonRpcMessage);
      } catch (error) {
        handlers.onError(toError(error));
      }
    });
    ws.on('error', (error) => {
      if (!open) reject(new ContinuityError('session-superseded', `WebSocket upgrade failed: ${error.message}`));
    });
    ws.once('close', (code, reason) => {
      if (open && !closing) handlers.onLost(new ContinuityError('session-superseded', `WebSocket closed (${code} ${reason.toString()})`));
      if (!open) reject(new ContinuityError('session-superseded', `WebSocket closed before it opened (${code})`));
    });
  });
}
