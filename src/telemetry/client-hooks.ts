/**
 * The client transport's observer for browsers (package.json `imports`, `#client-telemetry`
 * under the `browser` condition): the `onReconnect` hook only. OpenTelemetry's API would add
 * a third to the transport's bundle; a page that wants metrics builds them from the hook.
 */
import type { ErrorCode } from '../protocol/errors.js';
import type { JsonRpcMessage } from '../protocol/jsonrpc.js';
import { callHook, type ReconnectEvent } from './events.js';

/** Calls a client transport's hook; records nothing. Same surface as the Node observer. */
export class ClientObserver {
  readonly #onReconnect: ((event: ReconnectEvent) => void) | undefined;

  constructor(onReconnect: ((event: ReconnectEvent) => void) | undefined) {
    this.#onReconnect = onReconnect;
  }

  send(
    message: JsonRpcMessage,
    _sessionId: string | undefined,
    _protocolVersion: string | undefined,
    post: (message: JsonRpcMessage) => Promise<void>,
  ): Promise<void> {
    return post(message);
  }

  received(_message: JsonRpcMessage): void {}

  reconnected(event: ReconnectEvent): void {
    callHook(this.#onReconnect, event);
  }

  diverged(_code: ErrorCode, _protocolVersion: string | undefined): void {}

  sessionEnded(_protocolVersion: string | undefined, _errorType?: string): void {}
}
