/** The upgrade offer a server sends, and the shape of an upgraded connection (no I/O). */
import { ContinuityError } from '../protocol/errors.js';
import { WS_SUBPROTOCOL } from '../protocol/headers.js';
import type { JsonRpcMessage } from '../protocol/jsonrpc.js';

/** The offer carried by `notifications/mcp-continuity/upgrade-accepted`. */
export interface UpgradeOffer {
  token: string;
  subprotocol: string;
  expiresInMs: number;
}

export function isUpgradeOffer(v: unknown): v is UpgradeOffer {
  const o = v as Partial<UpgradeOffer> | undefined;
  return typeof o?.token === 'string' && o.subprotocol === WS_SUBPROTOCOL && typeof o.expiresInMs === 'number';
}

/** An open upgraded connection. */
export interface SocketChannel {
  send(message: JsonRpcMessage): void;
  close(): void;
}

export interface SocketHandlers {
  onMessage(message: JsonRpcMessage): void;
  /** The socket closed (not by us): the session cannot continue. */
  onLost(error: ContinuityError): void;
  onError: (error: Error) => void;
}

/** What a transport asked to upgrade reports where the runtime cannot (browsers). */
export function upgradeUnavailable(): ContinuityError {
  return new ContinuityError(
    'upgrade-invalid',
    'The WebSocket upgrade is not available in browsers (its handshake needs headers a browser cannot send): the session stays on SSE',
  );
}
