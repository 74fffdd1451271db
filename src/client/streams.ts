/**
 * The SSE streams a client transport follows: one per request answered with a stream,
 * and the standalone GET stream. It runs each to its end and turns how it ended into the
 * transport's next step: a lost stream fails the requests it owes, a divergence starts a
 * recovery, and a request stream's last position goes to the checkpoint.
 */
import { ContinuityError, toError } from '../protocol/errors.js';
import type { JsonRpcMessage, JsonRpcRequest } from '../protocol/jsonrpc.js';
import { InboundStream, StreamEnded, type InboundHost } from './inbound-stream.js';
import type { StreamPositions } from './positions.js';
import type { StreamCheckpoint } from './verifier.js';

/** What the streams need of their transport. */
export interface StreamsHost {
  readonly inbound: InboundHost;
  readonly positions: StreamPositions;
  /** The current session's ID (the real one, also while a restore waits for initialize). */
  sessionId(): string | undefined;
  closed(): boolean;
  /** The application turned the standalone stream off. */
  readonly standaloneOff: boolean;
  /** Hands a message (an answer or a failure) to the SDK. */
  emit(message: JsonRpcMessage): void;
  /** A divergence or a lost session: re-initialize (once, whoever asks). */
  recover(error: ContinuityError, stream: InboundStream | undefined, session: string | undefined): Promise<void>;
  report(error: Error): void;
}

export class ClientStreams {
  readonly #host: StreamsHost;
  readonly #all = new Set<InboundStream>();
  #standalone: InboundStream | undefined;
  /** Aborts every stream of the current session; replaced when the session is. */
  #abort = new AbortController();

  constructor(host: StreamsHost) {
    this.#host = host;
  }

  get standalone(): InboundStream | undefined {
    return this.#standalone;
  }

  /** Aborted when the session's streams end (recovery or close). */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  /** A stream for the answer to `request` (undefined: a stream that owes nothing yet). */
  forRequest(request: JsonRpcRequest | undefined): InboundStream {
    const stream = new InboundStream(this.#host.inbound, 'request', this.#abort.signal);
    if (request) stream.pending.set(JSON.stringify(request.id), request.id);
    return stream;
  }

  /**
   * Opens the standalone stream, at `position` after a restore; no-op without a session,
   * when one is open, or when turned off. Returns the stream it opened.
   */
  openStandalone(position: StreamCheckpoint | undefined): InboundStream | undefined {
    const host = this.#host;
    if (host.sessionId() === undefined || this.#standalone || host.closed() || host.standaloneOff) return undefined;
    const stream = new InboundStream(host.inbound, 'standalone', this.#abort.signal, position);
    this.#standalone = stream;
    host.positions.markStandalone(stream);
    void this.run(stream, undefined);
    return stream;
  }

  /** Stops the standalone stream (the session moved to a socket). */
  stopStandalone(): void {
    const standalone = this.#standalone;
    standalone?.stop();
    if (this.#standalone === standalone) this.#standalone = undefined;
  }

  /** Follows `stream` (from `response`, or its own GET) to its end. */
  async run(stream: InboundStream, response: Response | undefined): Promise<void> {
    const host = this.#host;
    const session = host.sessionId();
    this.#all.add(stream);
    try {
      await stream.follow(response);
    } catch (error) {
      if (error instanceof StreamEnded) {
        // The request was written and taken: it may have run, and is never sent again.
        if (error.reason === 'stream-lost') this.fail(stream, new ContinuityError('request-abandoned', error.message, { mayHaveRun: true }));
      } else if (error instanceof ContinuityError) {
        if (!host.closed()) await host.recover(error, stream, session);
      } else {
        host.report(toError(error));
      }
    } finally {
      this.#all.delete(stream);
      if (this.#standalone === stream) this.#standalone = undefined;
      const position = stream.kind === 'request' ? stream.checkpoint() : undefined;
      if (position) host.positions.record(stream, position, true);
    }
  }

  /** The session's log was reset under us: `request` fails with every other of the session. */
  async failWithSession(request: JsonRpcRequest | undefined, error: ContinuityError, session: string | undefined): Promise<void> {
    const stream = this.forRequest(request);
    this.#all.add(stream);
    try {
      await this.#host.recover(error, undefined, session);
    } finally {
      this.#all.delete(stream);
    }
  }

  /** Fails the requests `stream` owes with `error`, as JSON-RPC errors the SDK rejects with. */
  fail(stream: InboundStream, error: ContinuityError): number {
    const owed = [...stream.pending.values()];
    stream.pending.clear();
    for (const id of owed) this.#host.emit({ jsonrpc: '2.0', id, error: error.toJsonRpcError() });
    return owed.length;
  }

  /** Fails what every stream of the session owes; returns how many requests failed. */
  failAll(error: ContinuityError): number {
    let failed = 0;
    for (const s of this.#all) failed += this.fail(s, error);
    return failed;
  }

  /** Ends the session's streams; later streams start afresh. */
  reset(): void {
    this.#abort.abort();
    this.#abort = new AbortController();
    this.#standalone = undefined;
  }

  /** The session is gone: its standalone stream is no longer ours to track. */
  forgetStandalone(): void {
    this.#standalone = undefined;
  }

  /** The transport closes. */
  abort(): void {
    this.#abort.abort();
  }
}
