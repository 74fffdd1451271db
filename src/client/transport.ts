/**
 * A client transport for the official SDK `Client` (v1 and v2) that proves continuity on
 * every reconnect, or re-initializes. It speaks the Streamable HTTP transport to any
 * server; against one that carries proof (this project's endpoint) it verifies epoch,
 * sequence and hash chain of every event, against others it applies the safe posture of docs/design.md §3.
 */
import { ContinuityError } from '../protocol/errors.js';
import { DEFAULT_MAX_FRAME_BYTES, Header, UPGRADE_ACCEPTED, UPGRADE_REQUEST_HEADER } from '../protocol/headers.js';
import type { JsonRpcMessage, JsonRpcRequest, RequestId } from '../protocol/jsonrpc.js';
import { linkSignal, sleep } from './abort.js';
import { resolveReconnect, type ResolvedReconnect } from './backoff.js';
import { DivergenceRow } from './divergence-row.js';
import type { ContinuityClientOptions, DivergenceReport } from './options.js';
import { memoryCheckpoint, type CheckpointStore } from './checkpoint.js';

export type { ContinuityClientOptions, DivergenceReport } from './options.js';
import { toDivergenceError } from './errors.js';
import { InboundStream, StreamEnded, type InboundHost } from './inbound-stream.js';
import { OrderedDelivery } from './delivery.js';
import { InFlightPosts, type Posting } from './in-flight.js';
import { initializeSession, type InitializedSession } from './initialize.js';
import { StreamPositions } from './positions.js';
import { goneError, namesSession, refusalError, sessionGone } from './refusal.js';
import { jsonAnswer, notAnAnswer } from './post-answer.js';
import { readCheckpoint } from './restore.js';
import { corsRefusal } from './cors.js';
import { Outage, endSession, rideThrough } from './ride-through.js';
import { DEFAULT_MAX_EVENT_BYTES } from './sse-reader.js';
import { ClientUpgrade } from './upgrade.js';
import type { StreamCheckpoint } from './verifier.js';
import { ClientObserver } from '#client-telemetry';

/**
 * @example
 * ```ts
 * import { Client } from '@modelcontextprotocol/sdk/client/index.js';
 * import { ContinuityClientTransport, fileCheckpoint } from 'mcp-continuity/client';
 * const transport = new ContinuityClientTransport(new URL('http://localhost:3000/mcp'), {
 *   checkpoint: fileCheckpoint('./client.ckpt'),
 *   onDivergence: (report) => console.warn(`re-initialized after ${report.code}`),
 * });
 * await new Client({ name: 'app', version: '1.0.0' }).connect(transport);
 * ```
 */
export class ContinuityClientTransport implements InboundHost {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JsonRpcMessage) => void;

  readonly url: URL;
  readonly reconnect: ResolvedReconnect;
  readonly trustOpaqueIds: boolean;
  readonly maxEventBytes: number;
  #sessionId: string | undefined;
  #protocolVersion: string | undefined;
  #epoch: string | null = null;
  #init: JsonRpcRequest | undefined;
  #initKey: string | undefined;
  readonly #options: ContinuityClientOptions;
  readonly #checkpoints: CheckpointStore;
  readonly #fetch: (url: URL, init: RequestInit) => Promise<Response>;
  readonly #streams = new Set<InboundStream>();
  /** Requests whose POST has not been answered with headers yet (key → id). */
  readonly #posting = new InFlightPosts();
  /** Last position per stream, and its persistence. */
  readonly #positions: StreamPositions;
  #standalone: InboundStream | undefined;
  /**
   * The upgrade: while a GET that asked for it is unanswered, sends wait (a request racing
   * the switch would be refused with 409 or make the session ineligible); once the socket
   * is open, every message goes over it.
   */
  readonly #upgrade = new ClientUpgrade();
  readonly #delivery = new OrderedDelivery((message) => this.onmessage?.(message));
  #abort = new AbortController();
  /** Aborted only when the transport closes. */
  readonly #closing = new AbortController();
  #recovering: Promise<void> | undefined;
  readonly #row: DivergenceRow;
  /** Set once the transport gave up (`divergence-limit`): every later send fails with it. */
  #failure: ContinuityError | undefined;
  #started = false;
  #closed = false;
  readonly observer = new ClientObserver((event) => this.#options.onReconnect?.(event));

  constructor(url: URL | string, options: ContinuityClientOptions = {}) {
    this.url = new URL(url);
    this.#options = options;
    this.reconnect = resolveReconnect(options.reconnect);
    this.#row = new DivergenceRow(this.reconnect);
    this.maxEventBytes = options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES;
    this.trustOpaqueIds = options.trustOpaqueIds ?? false;
    this.#checkpoints = options.checkpoint ?? memoryCheckpoint();
    this.#fetch = options.fetch ?? ((u, init) => fetch(u, init));
    this.#positions = new StreamPositions(this.#checkpoints, () => ({
      sessionId: this.#sessionId,
      protocolVersion: this.#protocolVersion,
      epoch: this.#epoch,
      initialize: this.#init && JSON.stringify(this.#init),
      standalone: this.#standalone?.checkpoint(),
    }), (error) => this.report(error));
  }

  /** The session ID, once initialized (the SDK reads it). */
  get sessionId(): string | undefined {
    return this.#sessionId;
  }
  get epoch(): string | null {
    return this.#epoch;
  }
  get protocolVersion(): string | undefined {
    return this.#protocolVersion;
  }
  /** Is the session carried over an upgraded WebSocket? */
  get upgraded(): boolean {
    return this.#upgrade.open;
  }
  get upgradeRequested(): boolean {
    return this.#options.upgrade?.websocket === true && !this.#upgrade.open;
  }

  /**
   * Loads the checkpoint. With one, the SDK `Client` sees a session ID and skips
   * initialize; the standalone stream resumes from where the last process stopped.
   */
  async start(): Promise<void> {
    if (this.#started) throw new Error('ContinuityClientTransport already started');
    this.#started = true;
    const restored = await readCheckpoint(this.#checkpoints, (error) => this.report(error));
    if (!restored) return;
    const { checkpoint } = restored;
    this.#sessionId = checkpoint.sessionId;
    this.#protocolVersion = checkpoint.protocolVersion;
    this.#epoch = checkpoint.epoch;
    this.#init = restored.init;
    this.#positions.restore(checkpoint);
    const standalone = checkpoint.standalone === undefined ? undefined : checkpoint.streams[checkpoint.standalone];
    this.#openStandalone(standalone);
  }

  async send(message: JsonRpcMessage, _options?: { relatedRequestId?: RequestId }): Promise<void> {
    if (this.#failure) throw this.#failure;
    if (this.#closed) throw new Error('Transport closed');
    // Wait until the session is settled: a recovery may open a new upgrade gate, and an
    // upgrade may fail into a recovery.
    for (;;) {
      const wait = this.#recovering ?? this.#upgrade.waitFor;
      if (!wait) break;
      await wait;
    }
    if (this.#upgrade.trySend(message)) return;
    if ('method' in message && message.method === 'initialize' && 'id' in message) {
      this.#init = message;
      this.#initKey = JSON.stringify(message.id);
    }
    await this.observer.send(message, this.#sessionId, this.#protocolVersion, (traced) => this.#post(traced, true));
  }

  setProtocolVersion(version: string): void {
    this.#protocolVersion = version;
  }

  /** Ends the session on the server (DELETE) and forgets the checkpoint. */
  async terminateSession(): Promise<void> {
    const id = this.#sessionId;
    if (id === undefined) return;
    this.observer.sessionEnded(this.#protocolVersion);
    const signal = this.#closing.signal;
    await endSession(() => this.#fetch(this.url, { method: 'DELETE', headers: this.headers({}), signal }), { reconnect: this.reconnect, signal, outage: this.outage, stopped: () => this.#closed });
    this.#forgetSession();
    await this.#checkpoints.clear();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#closing.abort();
    this.#upgrade.close();
    this.#abort.abort();
    await this.#positions.stop().catch((error: unknown) => this.report(error as Error));
    this.onclose?.();
  }

  // InboundHost
  fetch(url: URL, init: RequestInit): Promise<Response> {
    return this.#fetch(url, init);
  }

  headers(extra: Record<string, string>): Headers {
    const user = typeof this.#options.headers === 'function' ? this.#options.headers() : this.#options.headers;
    const h = new Headers(user);
    if (this.#sessionId !== undefined) h.set(Header.SessionId, this.#sessionId);
    if (this.#protocolVersion !== undefined) h.set(Header.ProtocolVersion, this.#protocolVersion);
    for (const [k, v] of Object.entries(extra)) h.set(k, v);
    return h;
  }

  standaloneAnswered(response: Response | undefined): void {
    // An offer follows when the server says so; otherwise the stream is plain SSE.
    if (response?.headers.get(UPGRADE_REQUEST_HEADER) === 'websocket') return;
    this.#upgrade.openGate();
  }

  deliver(message: JsonRpcMessage): void {
    if ('method' in message && message.method === UPGRADE_ACCEPTED) {
      // Ours, not the application's: the server offers to move this session to a socket.
      this.#followUpgrade(message.params);
      return;
    }
    if (!('method' in message) && 'id' in message) this.#row.answered();
    this.#upgrade.answered(message);
    if (this.#initKey !== undefined && !('method' in message) && 'id' in message && JSON.stringify(message.id) === this.#initKey) {
      this.#initKey = undefined;
      if ('result' in message && typeof message.result.protocolVersion === 'string') this.#protocolVersion = message.result.protocolVersion;
      this.#positions.schedule(0);
    }
    this.#emit(message);
  }

  #emit(message: JsonRpcMessage): void {
    this.observer.received(message);
    this.#delivery.push(message);
  }

  advanced(stream: InboundStream): void {
    // Per event: the positions only note that the stream moved; they read it when saving.
    this.#positions.advanced(stream);
    this.#positions.schedule(this.#options.checkpointIntervalMs ?? 100);
  }

  report(error: Error): void {
    this.onerror?.(error);
  }

  /** Connection failures, reported once per outage. */
  readonly outage = new Outage((error) => this.report(error));

  async #post(message: JsonRpcMessage, mayRecover: boolean): Promise<void> {
    const session = this.#sessionId;
    const initializing = 'method' in message && message.method === 'initialize';
    const posting = this.#posting.begin(message);
    // One listener on the closing signal per POST, released once its answer is read.
    const link = linkSignal(this.#closing.signal);
    let handedOff = false;
    try {
      handedOff = await this.#postWith(message, mayRecover, { session, initializing, posting, signal: link.signal, release: link.release });
    } finally {
      if (!handedOff) link.release();
    }
  }

  /** The body of {@link #post}; true when a stream took over `release` (it calls it when done). */
  async #postWith(message: JsonRpcMessage, mayRecover: boolean, post: { session: string | undefined; initializing: boolean; posting: Posting | undefined; signal: AbortSignal; release: () => void }): Promise<boolean> {
    const { session, initializing, posting, signal, release } = post;
    let response: Response;
    let failedByRecovery = false;
    try {
      // Sent again only while it provably never reached a server, or was refused unaccepted (./ride-through.ts).
      response = await rideThrough(() => this.#fetch(this.url, {
        method: 'POST',
        headers: this.headers({ [Header.Accept]: 'application/json, text/event-stream', [Header.ContentType]: 'application/json' }),
        body: JSON.stringify(message),
        // Not the session's signal: a POST outlives a recovery that finds the session gone,
        // so that its own 404 can tell it ran nowhere and it may be sent again.
        signal,
      }), { reconnect: this.reconnect, signal, outage: this.outage, stopped: () => this.#closed || (posting !== undefined && !this.#posting.owns(posting)) });
    } catch (error) {
      // A recovery failed this request with its typed error and aborted the POST: the
      // SDK already has its answer, so the abort is not a second one.
      if (posting && !this.#posting.owns(posting)) return false;
      if (this.#closed || error instanceof ContinuityError) throw error;
      // The connection failed before any answer: whether the server ran it is unknown,
      // so it is not sent again; the caller gets a typed error to decide.
      throw (await corsRefusal(this.url, error, this.#fetch))
        ?? new ContinuityError('stream-lost', `The request's connection failed before an answer: ${(error as Error).message}`, undefined, { cause: error });
    } finally {
      if (posting && !this.#posting.end(posting)) failedByRecovery = true;
    }
    if (failedByRecovery) {
      // A recovery already answered this request with its typed error while the headers
      // were on their way: whatever the old session says now, the SDK has its answer, and
      // a request failed that way is never sent again.
      await response.body?.cancel().catch(() => {});
      return false;
    }
    if (initializing && response.ok) this.#adoptSession(response);
    // A 400 may name the session as its cause (servers that do not say 404): read it to see.
    const rejection = response.status === 400 && session !== undefined && !initializing ? await response.text().catch(() => '') : undefined;
    if ((response.status === 404 || (rejection !== undefined && namesSession(400, rejection))) && session !== undefined && !initializing) {
      // The server says it does not know the session: nothing of this POST ran, so it
      // is safe to send again — after a new session is set up. Its reason (a session that
      // could not be rebuilt, say) is what the application is told.
      const gone = goneError(response.status === 404 ? await response.text().catch(() => '') : '');
      if (!mayRecover) throw gone;
      await this.#recover(gone, undefined, session);
      await this.#post(message, false);
      return false;
    }
    if (!response.ok) {
      const text = rejection ?? (await response.text().catch(() => ''));
      throw refusalError(response.status, text, () => new Error(`HTTP ${response.status}: ${text.slice(0, 200)}`));
    }
    const epoch = response.headers.get(Header.ReplayEpoch);
    if (!initializing && session !== undefined && epoch !== null && epoch !== this.#epoch) {
      // The session's log was reset under us: what we hold of it cannot be continued.
      // This POST reached the server, so it is failed with the rest — never re-sent.
      await response.body?.cancel();
      const error = toDivergenceError({ kind: 'epoch-changed', expected: this.#epoch, actual: epoch });
      const stream = new InboundStream(this, 'request', this.#abort.signal);
      if ('method' in message && 'id' in message) stream.pending.set(JSON.stringify(message.id), message.id);
      this.#streams.add(stream);
      try {
        await this.#recover(error, undefined, session);
      } finally {
        this.#streams.delete(stream);
      }
      return false;
    }
    if ('method' in message && message.method === 'notifications/initialized') this.#openStandalone(undefined);
    const type = response.headers.get(Header.ContentType) ?? '';
    if (response.status === 202 || !response.body) {
      await response.body?.cancel();
      return false;
    }
    if (type.includes('text/event-stream')) {
      const stream = new InboundStream(this, 'request', this.#abort.signal);
      if ('method' in message && 'id' in message) stream.pending.set(JSON.stringify(message.id), message.id);
      void this.#run(stream, response).finally(release);
      return true;
    }
    const id = 'method' in message && 'id' in message ? message.id : undefined;
    if (type.includes('application/json')) {
      for (const m of jsonAnswer(response.status, await response.text(), id)) this.deliver(m);
      return false;
    }
    await response.body.cancel();
    if (id !== undefined) throw notAnAnswer(response.status, type);
    return false;
  }

  async #run(stream: InboundStream, response: Response | undefined): Promise<void> {
    const session = this.#sessionId;
    this.#streams.add(stream);
    try {
      await stream.follow(response);
    } catch (error) {
      if (error instanceof StreamEnded) {
        if (error.reason === 'stream-lost') this.#fail(stream, new ContinuityError('stream-lost', error.message));
      } else if (error instanceof ContinuityError) {
        if (!this.#closed) await this.#recover(error, stream, session);
      } else {
        this.report(error instanceof Error ? error : new Error(String(error)));
      }
    } finally {
      this.#streams.delete(stream);
      if (this.#standalone === stream) this.#standalone = undefined;
      const position = stream.kind === 'request' ? stream.checkpoint() : undefined;
      if (position) {
        this.#positions.record(stream, position, true);
      }
    }
  }

  /**
   * After a divergence or a lost session: fail every in-flight request of the old session
   * with the typed error, drop its streams, re-initialize, reopen the standalone stream,
   * and tell the application what it cost. Concurrent calls share one recovery.
   */
  #recover(error: ContinuityError, stream: InboundStream | undefined, session: string | undefined): Promise<void> {
    if (this.#recovering) return this.#recovering;
    if (session !== this.#sessionId) return Promise.resolve(); // that session is already replaced
    const detectedAt = Date.now();
    this.observer.diverged(error.code, this.#protocolVersion);
    const detectMs = stream?.reconnectStartedAt === undefined ? 0 : detectedAt - stream.reconnectStartedAt;
    let failed = 0;
    for (const s of this.#streams) failed += this.#fail(s, error);
    // Requests still waiting for their POST's headers went to the old session too. If that
    // session is gone, their own 404 will say they ran nowhere, and they are sent again on
    // the new one; otherwise they may have run there, so they fail with the typed error.
    const inFlightSettled = this.#posting.failAll(error, sessionGone(error), (m) => this.#emit(m));
    failed += this.#upgrade.fail(error, (m) => this.#emit(m));
    this.#abort.abort();
    this.#abort = new AbortController();
    this.#forgetSession();
    const { consecutive, backoffMs, limit } = this.#row.diverged(error, detectedAt);
    this.#recovering = (async () => {
      const report: DivergenceReport = {
        code: error.code, error, previousSessionId: session, sessionId: undefined, failedRequests: failed, detectMs, reinitializeMs: 0, consecutive, backoffMs,
      };
      const started = Date.now();
      try {
        if (limit) {
          // The transport gives up: later sends fail with this error, and it closes.
          this.#failure = limit;
          queueMicrotask(() => void this.close());
          throw limit;
        }
        if (backoffMs > 0) await sleep(backoffMs, this.#closing.signal, () => new ContinuityError('endpoint-closed', 'Transport closed'));
        this.#adopt(await initializeSession(this, this.#init, this.#abort.signal));
        this.#row.reinitialized(Date.now());
        report.sessionId = this.#sessionId;
        await this.#positions.save();
        this.#openStandalone(undefined);
      } catch (e) {
        report.reinitializeError = e instanceof Error ? e : new Error(String(e));
        this.report(report.reinitializeError);
      }
      report.reinitializeMs = Date.now() - started;
      report.failedRequests += await inFlightSettled;
      this.#options.onDivergence?.(report);
    })().finally(() => {
      this.#recovering = undefined;
    });
    return this.#recovering;
  }

  /** Fails the requests `stream` owes with `error`, as JSON-RPC errors the SDK rejects with. */
  #fail(stream: InboundStream, error: ContinuityError): number {
    const owed = [...stream.pending.values()];
    stream.pending.clear();
    for (const id of owed) this.#emit({ jsonrpc: '2.0', id, error: error.toJsonRpcError() });
    return owed.length;
  }

  /** Follows an upgrade offer: the SSE standalone stream stops (a resume of it now would supersede the session). */
  #followUpgrade(params: unknown): void {
    if (!this.#options.upgrade?.websocket || this.#closed) return;
    const session = this.#sessionId;
    const host = { url: this.url, headers: (e: Record<string, string>) => this.headers(e), deliver: (m: JsonRpcMessage) => this.deliver(m), report: (e: Error) => this.report(e), lost: (error: ContinuityError) => void this.#recover(error, undefined, session) };
    const standalone = this.#standalone;
    if (this.#upgrade.follow(params, host, this.#options.upgrade.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES)) {
      standalone?.stop();
      if (this.#standalone === standalone) this.#standalone = undefined;
    }
  }

  #adoptSession(response: Response): void {
    this.#sessionId = response.headers.get(Header.SessionId) ?? undefined;
    this.#epoch = response.headers.get(Header.ReplayEpoch);
  }

  #adopt(session: InitializedSession): void {
    this.#sessionId = session.sessionId;
    this.#epoch = session.epoch;
    this.#protocolVersion = session.protocolVersion;
  }

  #forgetSession(): void {
    this.#sessionId = undefined;
    this.#epoch = null;
    this.#positions.clear();
    this.#standalone = undefined;
  }

  #openStandalone(position: StreamCheckpoint | undefined): void {
    if (this.#sessionId === undefined || this.#standalone || this.#closed || this.#options.standaloneStream === false) return;
    const stream = new InboundStream(this, 'standalone', this.#abort.signal, position);
    this.#standalone = stream;
    if (this.upgradeRequested && position === undefined) this.#upgrade.closeGate();
    this.#positions.markStandalone(stream);
    void this.#run(stream, undefined);
  }
}
