/**
 * The client transport's side of observability: a span and a duration per request it sends
 * (the span's context injected into `params._meta`, so the server's span hangs under it),
 * reconnections by outcome (and the `onReconnect` hook), divergences by code.
 */
import { context } from '@opentelemetry/api';
import type { ErrorCode } from '../protocol/errors.js';
import type { JsonRpcMessage } from '../protocol/jsonrpc.js';
import { callHook, type ReconnectEvent } from './events.js';
import { instruments } from './meter.js';
import { Operations } from './operations.js';
import { injectIntoMeta } from './trace-context.js';

/** Counts a client transport's events and calls its hook. */
export class ClientObserver {
  readonly #operations = new Operations('client');
  readonly #onReconnect: ((event: ReconnectEvent) => void) | undefined;
  #sessionStarted: number | undefined;

  constructor(onReconnect: ((event: ReconnectEvent) => void) | undefined) {
    this.#onReconnect = onReconnect;
  }

  /**
   * Sends `message` with `post`: its operation begins, and the message carries its trace
   * context in `params._meta`. A send that fails ends the operation with the error's code.
   */
  async send(
    message: JsonRpcMessage,
    sessionId: string | undefined,
    protocolVersion: string | undefined,
    post: (message: JsonRpcMessage) => Promise<void>,
  ): Promise<void> {
    if (!('method' in message)) return post(message);
    if (message.method === 'initialize') this.#sessionStarted = performance.now();
    const ctx = this.#operations.begin(message, sessionId, protocolVersion, context.active());
    const params = injectIntoMeta(message.params, ctx);
    try {
      await post(params === message.params ? message : { ...message, params });
    } catch (error) {
      if ('id' in message) this.#operations.fail(message.id, (error as { code?: unknown }).code ?? 'send-failed');
      throw error;
    }
  }

  /** A message reached the application (a response ends its operation). */
  received(message: JsonRpcMessage): void {
    this.#operations.end(message);
  }

  /** A stream's reconnection ended: resumed, opened anew, or refused with a code. */
  reconnected(event: ReconnectEvent): void {
    instruments().reconnects.add(1, { 'mcp_continuity.outcome': event.outcome, 'mcp_continuity.stream': event.stream });
    callHook(this.#onReconnect, event);
  }

  /** The client found a divergence or a lost session (it re-initializes). */
  diverged(code: ErrorCode, protocolVersion: string | undefined): void {
    instruments().divergences.add(1, { 'error.type': code });
    this.sessionEnded(protocolVersion, code);
  }

  /** The session ended (terminated, closed, or lost with `errorType`). */
  sessionEnded(protocolVersion: string | undefined, errorType?: string): void {
    const started = this.#sessionStarted;
    if (started === undefined) return;
    this.#sessionStarted = undefined;
    this.#operations.abandon(errorType ?? 'session-ended');
    const attributes: Record<string, string> = { 'network.transport': 'tcp' };
    if (protocolVersion !== undefined) attributes['mcp.protocol.version'] = protocolVersion;
    if (errorType !== undefined) attributes['error.type'] = errorType;
    instruments().clientSessionDuration.record((performance.now() - started) / 1000, attributes);
  }
}
