/**
 * The client's half of the upgrade in browsers (package.json `imports`, `#client-upgrade`
 * under the `browser` condition): the handshake carries the session and the token in
 * headers, which a browser's `WebSocket` cannot send, so a browser never asks for an offer
 * and its session stays on SSE. The transport says so once (`upgrade-invalid`) when the
 * application asked for the upgrade.
 */
import type { JsonRpcMessage } from '../protocol/jsonrpc.js';
import type { Upgrade } from './upgrade.js';

export class ClientUpgrade implements Upgrade {
  readonly supported = false;
  readonly open = false;
  readonly waitFor = undefined;
  trySend(): boolean {
    return false;
  }
  answered(): void {}
  closeGate(): void {}
  openGate(): void {}
  follow(): boolean {
    return false;
  }
  fail(_error: unknown, _emit: (message: JsonRpcMessage) => void): number {
    return 0;
  }
  close(): void {}
}
