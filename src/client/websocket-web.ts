/**
 * The upgraded socket in browsers (package.json `imports`, `#client-socket` under the
 * `browser` condition): the handshake carries the session and the token in headers, which a
 * browser's `WebSocket` cannot send, so the upgrade is refused here with a typed error.
 */
import { ContinuityError } from '../protocol/errors.js';
import type { SocketChannel, SocketHandlers, UpgradeOffer } from './socket-offer.js';

export function openSocket(_url: URL, _headers: Headers, _offer: UpgradeOffer, _handlers: SocketHandlers, _maxPayload: number): Promise<SocketChannel> {
  return Promise.reject(new ContinuityError('upgrade-invalid', 'The WebSocket upgrade is not available in browsers: its handshake needs headers a browser cannot send'));
}
