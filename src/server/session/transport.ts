/**
 * The SDK-facing side of a session: an object that satisfies the official SDK's
 * `Transport` interface (v1 and v2 share its shape). The SDK server connects to it; what
 * it sends goes to the session's router, what the client posts comes in through
 * `receive`. It holds no state of its own beyond the callbacks.
 */
import { ContinuityError } from '../../protocol/errors.js';
import type { JsonRpcMessage, RequestId } from '../../protocol/jsonrpc.js';
import { Operations } from '../../telemetry/operations.js';

/** The subset of the SDK's `TransportSendOptions` we honour. */
export interface SendOptions {
  relatedRequestId?: RequestId;
}

/** What the SDK's `MessageExtraInfo` carries in v1 (`requestInfo`) and v2 (`request`). */
export interface MessageExtra {
  requestInfo?: { headers: Record<string, string | string[] | undefined>; url?: URL };
  request?: Request;
  authInfo?: unknown;
  closeSSEStream?: () => void;
  closeStandaloneSSEStream?: () => void;
}

/** The extra info the SDK passes to handlers, in both its v1 (`requestInfo`) and v2 (`request`) shapes. */
export function messageExtra(request: Request, authInfo: unknown, closeStandaloneSSEStream: () => void): MessageExtra {
  const headers: Record<string, string> = {};
  request.headers.forEach((value, key) => {
    headers[key] = value;
  });
  return { request, requestInfo: { headers, url: new URL(request.url) }, authInfo, closeStandaloneSSEStream };
}

export interface TransportOwner {
  deliver(message: JsonRpcMessage, options: SendOptions | undefined): Promise<void>;
  /** The SDK side closed (e.g. `server.close()`). */
  transportClosed(): void;
}

export class SessionTransport {
  readonly sessionId: string;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JsonRpcMessage, extra?: MessageExtra) => void;
  readonly #owner: TransportOwner;
  #closed = false;
  /** The client's requests being handled: their spans and durations. */
  readonly #operations = new Operations('server');
  readonly #protocolVersion: () => string | undefined;

  constructor(sessionId: string, owner: TransportOwner, protocolVersion: () => string | undefined = () => undefined) {
    this.sessionId = sessionId;
    this.#owner = owner;
    this.#protocolVersion = protocolVersion;
  }

  async start(): Promise<void> {}

  /** The SDK server this transport is connected to: its registered tools and prompts are the metrics' known names. */
  useServer(server: unknown): void {
    this.#operations.names?.useServer(server);
  }

  send(message: JsonRpcMessage, options?: SendOptions): Promise<void> {
    if (this.#closed) return Promise.reject(new ContinuityError('session-not-found', 'Transport closed: the session ended'));
    this.#operations.end(message);
    return this.#owner.deliver(message, options);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#operations.abandon('request-abandoned');
    this.onclose?.();
    this.#owner.transportClosed();
  }

  /** Hands a client message to the SDK server. */
  receive(message: JsonRpcMessage, extra: MessageExtra): void {
    if (this.#closed) return;
    // A rebuild's replayed initialize carries no request info: it is not the client's operation.
    if (!('method' in message) || extra.requestInfo === undefined) return this.onmessage?.(message, extra);
    this.#operations.run(message, this.sessionId, this.#protocolVersion(), () => this.onmessage?.(message, extra));
  }
}
