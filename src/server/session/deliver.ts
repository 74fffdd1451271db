/**
 * Where each message the SDK server sends goes: after an upgrade offer, to the socket's
 * stream only; a response to the stream of its request (or to its JSON waiter); a related
 * message to its request's stream while that is open; anything else to the standalone
 * stream. Also holds the answers nobody waits for (a rebuild's replayed requests) and the
 * initialize answer, which fixes the session's revision or ends a refused session.
 */
import { ContinuityError } from '../../protocol/errors.js';
import { isResponse, type JsonRpcMessage, type JsonRpcRequest, type RequestId } from '../../protocol/jsonrpc.js';
import type { OutboundStream } from '../stream/outbound-stream.js';
import type { SessionSocket } from '../upgrade/socket.js';
import type { LastingState } from './lasting.js';
import { encodeMessage, encodeResponse } from './outgoing.js';
import { idKey, type RequestTable } from './request-table.js';
import type { SessionStreams } from './streams.js';
import type { SendOptions } from './transport.js';

/** What routing needs of its session. */
export interface DeliveryParts {
  readonly requests: RequestTable;
  readonly streams: SessionStreams;
  readonly socket: SessionSocket;
  readonly lasting: LastingState;
  readonly maxEventBytes: number;
  /** Hands a message to the SDK server as if a client had sent it. */
  receive(message: JsonRpcMessage): void;
  /** The initialize was answered with `version`: the record is updated and saved. */
  initialized(version: string): Promise<void>;
  /** The SDK refused to initialize and the refusal is out: the session ends. */
  endRefused(): void;
}

export class Delivery {
  readonly #parts: DeliveryParts;
  #initializeKey: string | undefined;
  /** The SDK refused to initialize: the session ends once that answer is written. */
  #refused: { stream: OutboundStream | undefined } | undefined;
  /** Responses nobody waits for (the replayed initialize of a rehydration). */
  readonly #swallow = new Map<string, () => void>();

  constructor(parts: DeliveryParts) {
    this.#parts = parts;
  }

  /** The request whose answer is the initialize answer (for a fresh session). */
  expectInitialize(request: JsonRpcRequest): void {
    this.#initializeKey = idKey(request.id);
  }

  /** Is `key` the initialize request (it gets no priming event)? */
  isInitialize(key: string | undefined): boolean {
    return key === this.#initializeKey;
  }

  /** Hands `request` to the SDK server; resolves once it answered (the answer is dropped). */
  internal(request: JsonRpcRequest): Promise<void> {
    const answered = new Promise<void>((resolve) => this.#swallow.set(idKey(request.id), resolve));
    this.#parts.receive(request);
    return answered;
  }

  /** The refused initialize's stream completed: the session may end now. */
  streamCompleted(stream: OutboundStream): void {
    if (this.#refused?.stream === stream) this.#endRefused();
  }

  async deliver(message: JsonRpcMessage, options: SendOptions | undefined): Promise<void> {
    const { requests, streams, maxEventBytes } = this.#parts;
    const socketStream = this.#parts.socket.stream;
    if (socketStream) {
      // Since the upgrade offer everything goes to the socket's stream, and only there:
      // nothing is ever delivered on both transports.
      if (isResponse(message) && message.id !== null && message.id !== undefined) requests.answered(idKey(message.id));
      const { payload, bytes } = encodeMessage(message, maxEventBytes);
      return socketStream.append(payload, bytes);
    }
    if (isResponse(message) && message.id !== null && message.id !== undefined) return this.#respond(message, message.id);
    const related = options?.relatedRequestId;
    const stream = (related !== undefined && requests.stream(idKey(related))) || streams.standalone;
    const { payload, bytes } = encodeMessage(message, maxEventBytes);
    return stream.append(payload, bytes);
  }

  async #respond(message: JsonRpcMessage, id: RequestId): Promise<void> {
    const { requests, lasting, maxEventBytes } = this.#parts;
    const key = idKey(id);
    const swallow = this.#swallow.get(key);
    if (swallow) {
      this.#swallow.delete(key);
      return swallow();
    }
    if (key === this.#initializeKey) await this.#onInitializeResponse(message);
    await lasting.answered(key, message);
    if (requests.resolveJson(key, message)) {
      if (this.#refused) this.#endRefused();
      return;
    }
    const stream = requests.stream(key);
    if (!stream) throw new ContinuityError('internal-error', `No open request ${key} to answer`);
    if (this.#refused) this.#refused.stream = stream;
    const { payload, bytes } = encodeResponse(message, id, maxEventBytes);
    requests.answered(key);
    const appended = stream.append(payload, bytes);
    stream.answered(key);
    return appended;
  }

  async #onInitializeResponse(message: JsonRpcMessage): Promise<void> {
    this.#initializeKey = undefined;
    const version = 'result' in message ? message.result.protocolVersion : undefined;
    if (typeof version === 'string') {
      await this.#parts.initialized(version);
    } else {
      // The SDK refused to initialize: the session must not outlive the answer, but the
      // answer goes out first (ended at once, the client would get an empty 200 stream).
      this.#refused = { stream: undefined };
    }
  }

  #endRefused(): void {
    this.#refused = undefined;
    this.#parts.endRefused();
  }
}
