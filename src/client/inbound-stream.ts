/**
 * Following one server stream (the standalone GET stream, or the SSE answer to one POST)
 * to its end: every event goes through the verifier before it reaches the SDK, and a
 * dropped connection is resumed with `Last-Event-ID` — honouring `retry:`, else backing
 * off with jitter — until the stream is done. A divergence is thrown, never swallowed.
 */
import type { Outage } from './ride-through.js';
import { ContinuityError, ERRORS, isContinuityError, isErrorCode } from '../protocol/errors.js';
import { Header, UPGRADE_REQUEST_HEADER } from '../protocol/headers.js';
import type { JsonRpcMessage } from '../protocol/jsonrpc.js';
import { linkSignal, sleep, type LinkedSignal } from './abort.js';
import { reconnectDelay, type ResolvedReconnect } from './backoff.js';
import { toDivergenceError } from './errors.js';
import { namesSession, refusalReason } from './refusal.js';
import { readSse } from './sse-reader.js';
import type { ClientObserver } from '#client-telemetry';
import { createStreamVerifier, isDivergence, verifyReconnect, type StreamCheckpoint, type StreamVerifier } from './verifier.js';

/** What a stream needs from the transport. */
export interface InboundHost {
  readonly url: URL;
  readonly reconnect: ResolvedReconnect;
  readonly trustOpaqueIds: boolean;
  /** Largest incoming SSE event, bytes. */
  readonly maxEventBytes: number;
  fetch(url: URL, init: RequestInit): Promise<Response>;
  /** Headers for a request of the current session. */
  headers(extra: Record<string, string>): Headers;
  readonly sessionId: string | undefined;
  readonly epoch: string | null;
  /** Ask for the WebSocket upgrade offer on a fresh standalone stream. */
  readonly upgradeRequested: boolean;
  /** The standalone stream's GET was answered (or failed: `response` undefined). */
  standaloneAnswered(response: Response | undefined): void;
  /** A verified message, in order, exactly once. */
  deliver(message: JsonRpcMessage, stream: InboundStream): void;
  /** The stream's position advanced (for the checkpoint). */
  advanced(stream: InboundStream): void;
  /** Errors that are reported, not fatal (a malformed message, say). */
  report(error: Error): void;
  /** Counts reconnections (and calls the application's `onReconnect`). */
  readonly observer: ClientObserver;
  /** Connection failures go here: one report per outage, not per attempt. */
  readonly outage: Outage;
}

/** Raised when a stream cannot continue for a reason that is not a divergence. */
export class StreamEnded extends Error {
  constructor(
    readonly reason: 'closed' | 'no-get-stream' | 'stream-lost',
    message: string,
  ) {
    super(message);
  }
}

export class InboundStream {
  readonly kind: 'standalone' | 'request';
  /** Request keys (JSON of the id) whose responses this stream owes. */
  readonly pending = new Map<string, string | number>();
  readonly #host: InboundHost;
  readonly #verifier: StreamVerifier;
  readonly #signal: AbortSignal;
  readonly #own = new AbortController();
  #retryMs: number | undefined;
  /** The signal of the current GET: one listener on the stream's signal, released after each response. */
  #request: LinkedSignal | undefined;
  /** When the current reconnection began (ms), for the report of a divergence it finds. */
  reconnectStartedAt: number | undefined;

  constructor(host: InboundHost, kind: 'standalone' | 'request', signal: AbortSignal, checkpoint?: StreamCheckpoint) {
    this.#host = host;
    this.kind = kind;
    this.#signal = AbortSignal.any([signal, this.#own.signal]);
    this.#verifier = createStreamVerifier({ checkpoint, epoch: host.epoch, trustOpaqueIds: host.trustOpaqueIds });
    if (checkpoint) this.#verifier.reconnected();
  }

  /** Ends this stream now, without reconnecting (its transport moves elsewhere). */
  stop(): void {
    this.#own.abort();
  }

  /** The last verified position, if any event carried an ID. */
  checkpoint(): StreamCheckpoint | undefined {
    return this.#verifier.checkpoint();
  }

  /** A request stream is done once every response it owes has arrived. */
  get done(): boolean {
    return this.kind === 'request' && this.pending.size === 0;
  }

  /**
   * Reads `response` (the POST's or the first GET's) and keeps the stream going across
   * disconnects until it is done. Throws a DivergenceError or a StreamEnded.
   */
  async follow(response: Response | undefined): Promise<void> {
    let attempt = 0;
    /** When the current run of failed resumes began: a resume that a server answers ends it. */
    let unreachedSince: number | undefined;
    // Opening a stream (no response yet) connects at once; only reconnections wait.
    let immediate = response === undefined;
    for (;;) {
      if (response?.body) {
        const before = this.#verifier.checkpoint()?.lastId;
        try {
          await readSse(
            response.body,
            {
              onEvent: (e) => this.#onEvent(e.id, e.data),
              onRetry: (ms) => {
                this.#retryMs = ms;
              },
            },
            this.#host.maxEventBytes,
          );
        } catch (error) {
          // An oversized event is a lost connection that is said out loud; resume below.
          if (isContinuityError(error, 'inbound-event-too-large')) this.#host.report(error);
          else if (isFatal(error)) throw error;
          // A dropped connection: resume below.
        } finally {
          this.#releaseRequest();
        }
        // Progress resets the backoff: only consecutive failures grow it.
        if (this.#verifier.checkpoint()?.lastId !== before) attempt = 0;
      }
      if (this.done) return;
      if (this.#signal.aborted) throw new StreamEnded('closed', 'Transport closed');
      const checkpoint = this.#verifier.checkpoint();
      if (this.kind === 'request' && (checkpoint === undefined || this.#host.sessionId === undefined)) {
        // No event ID was ever seen: there is nothing to resume from, and re-sending
        // the request could repeat a tool call. Fail it instead.
        throw new StreamEnded('stream-lost', 'The response stream ended before any resumable event: the request may have run');
      }
      if (this.kind === 'request' && attempt >= this.#host.reconnect.maxRequestAttempts) {
        throw new StreamEnded('stream-lost', `The response stream could not be resumed after ${attempt} attempts`);
      }
      if (!immediate) {
        this.reconnectStartedAt ??= Date.now();
        // A request's resume waits through an outage within the same total bound as its POST;
        // it was accepted, so it ends as one that may have run.
        unreachedSince ??= Date.now();
        const left = this.kind === 'request' ? this.#host.reconnect.maxOutageMs - (Date.now() - unreachedSince) : Infinity;
        if (left <= 0) throw new StreamEnded('stream-lost', 'The response stream could not be resumed within reconnect.maxOutageMs');
        await sleep(Math.min(left, reconnectDelay(this.#host.reconnect, attempt, this.#retryMs)), this.#signal, closed);
        attempt++;
      }
      response = await this.#observed(checkpoint?.lastId, attempt, !immediate);
      if (response) unreachedSince = undefined;
      immediate = false;
    }
  }

  /** One reconnection attempt, told to the observer when it is one (not a stream's first open). */
  async #observed(lastEventId: string | undefined, attempt: number, again: boolean): Promise<Response | undefined> {
    const observe = again || lastEventId !== undefined;
    const started = this.reconnectStartedAt;
    const event = { sessionId: this.#host.sessionId, stream: this.kind, attempt, ms: started === undefined ? 0 : Date.now() - started };
    try {
      const response = await this.#reconnect(lastEventId);
      if (response && observe) this.#host.observer.reconnected({ ...event, outcome: lastEventId === undefined ? 'opened' : 'resumed' });
      return response;
    } catch (error) {
      if (observe && error instanceof ContinuityError) this.#host.observer.reconnected({ ...event, outcome: error.code });
      throw error;
    }
  }

  /** One reconnection attempt: a verified response to read, or undefined to try again. */
  async #reconnect(lastEventId: string | undefined): Promise<Response | undefined> {
    const host = this.#host;
    const extra: Record<string, string> = { [Header.Accept]: 'text/event-stream' };
    if (lastEventId !== undefined) extra[Header.LastEventId] = lastEventId;
    // Only a fresh standalone stream may ask for the upgrade offer; a resume never does.
    else if (this.kind === 'standalone' && host.upgradeRequested) extra[UPGRADE_REQUEST_HEADER] = 'websocket';
    let response: Response;
    this.#releaseRequest();
    this.#request = linkSignal(this.#signal);
    try {
      response = await host.fetch(host.url, { method: 'GET', headers: host.headers(extra), signal: this.#request.signal });
    } catch (error) {
      this.#releaseRequest();
      if (this.kind === 'standalone') host.standaloneAnswered(undefined);
      if (this.#signal.aborted) throw new StreamEnded('closed', 'Transport closed');
      host.outage.failed(error);
      return undefined;
    }
    host.outage.reached();
    if (this.kind === 'standalone') host.standaloneAnswered(response);
    if (this.kind === 'standalone' && response.status === 405) {
      await response.body?.cancel();
      throw new StreamEnded('no-get-stream', 'The server offers no GET stream');
    }
    if (response.status === 502 || response.status === 503 || response.status === 504) {
      // A gateway or a busy server: nothing was said about the session; try again later.
      await response.body?.cancel();
      return undefined;
    }
    const text = response.ok ? '' : await response.text().catch(() => '');
    const reason = response.ok ? undefined : refusalReason(text);
    if (reason === undefined && response.status === 400 && namesSession(400, text)) {
      // A server that says 400 for an unknown session: the session is gone, as with a 404.
      throw new ContinuityError('session-not-found', undefined, { status: 400 });
    }
    if (response.status === 429 && isErrorCode(reason) && ERRORS[reason].retryable) {
      // Too many readers or requests for now (reader-limit, in-flight-limit): the session is fine.
      return undefined;
    }
    if (reason !== undefined && isErrorCode(reason)) {
      // The server said exactly why it refused (replay-window-exceeded, session-not-found, …):
      // report that, not a generic "session invalid".
      throw new ContinuityError(reason, undefined, { status: response.status });
    }
    if (response.status === 409 && lastEventId !== undefined) {
      // Conflict on a resume, with no reason of ours: a server that has not yet seen the cut
      // connection close still holds the stream. The session is fine; try again after the
      // backoff (a request stream gives up after its attempts).
      return undefined;
    }
    const verdict = verifyReconnect(
      { sessionId: host.sessionId ?? '', epoch: host.epoch },
      { status: response.status, sessionId: response.headers.get(Header.SessionId), epoch: response.headers.get(Header.ReplayEpoch), reason },
    );
    if (isDivergence(verdict)) {
      await response.body?.cancel().catch(() => {});
      throw toDivergenceError(verdict);
    }
    this.#verifier.reconnected();
    return response;
  }

  #releaseRequest(): void {
    this.#request?.release();
    this.#request = undefined;
  }

  #onEvent(id: string | undefined, data: string): void {
    const verdict = this.#verifier.check(id, data);
    if (isDivergence(verdict)) throw toDivergenceError(verdict);
    if (verdict.kind !== 'continuous') return; // a boundary replay or duplicate: already delivered
    this.reconnectStartedAt = undefined;
    if (id) this.#host.advanced(this);
    if (data === '') return; // priming event: a position, no message
    let message: JsonRpcMessage;
    try {
      message = JSON.parse(data) as JsonRpcMessage;
    } catch {
      this.#host.report(new Error(`Ignoring an SSE event whose data is not JSON (id ${String(id)})`));
      return;
    }
    if (!('method' in message) && 'id' in message && message.id !== null) this.pending.delete(JSON.stringify(message.id));
    this.#host.deliver(message, this);
  }
}

function isFatal(error: unknown): boolean {
  return error instanceof ContinuityError || error instanceof StreamEnded;
}

function closed(): StreamEnded {
  return new StreamEnded('closed', 'Transport closed');
}
