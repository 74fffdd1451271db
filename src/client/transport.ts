/**
 * A client transport for the official SDK `Client` (v1 and v2) that proves continuity on
 * every reconnect, or re-initializes. It speaks the Streamable HTTP transport to any
 * server; against one that carries proof (this project's endpoint) it verifies epoch,
 * sequence and hash chain of every event, against others it applies seed 000's posture.
 */
import { ContinuityError, type ErrorCode } from '../protocol/errors.js';
import { Header, UPGRADE_ACCEPTED, UPGRADE_REQUEST_HEADER } from '../protocol/headers.js';
import type { JsonRpcMessage, JsonRpcRequest, RequestId } from '../protocol/jsonrpc.js';
import { DEFAULT_RECONNECT, type ReconnectOptions } from './backoff.js';
import { memoryCheckpoint, type CheckpointStore, type SessionCheckpoint } from './checkpoint.js';
import { toDivergenceError } from './errors.js';
import { InboundStream, StreamEnded, type InboundHost } from './inbound-stream.js';
import { OrderedDelivery } from './delivery.js';
import { initializeSession, type InitializedSession } from './initialize.js';
import { StreamPositions } from './positions.js';
import { refusalError } from './refusal.js';
import { isUpgradeOffer, openSocket, type SocketChannel } from './websocket.js';
import type { StreamCheckpoint } from './verifier.js';

/** What the application is told after a divergence or a lost session. */
export interface DivergenceReport {
  /** The case: a divergence verdict's kind, or a server refusal (`session-not-found`, …). */
  code: ErrorCode;
  error: ContinuityError;
  previousSessionId: string | undefined;
  /** The session that replaced it (undefined if re-initialization failed). */
  sessionId: string | undefined;
  /** In-flight requests failed with `error` (never silently re-sent). */
  failedRequests: number;
  /** From the start of the reconnection that found it to the verdict, ms (0 if found live). */
  detectMs: number;
  /** Time to re-initialize, ms. */
  reinitializeMs: number;
  /** Set when re-initialization itself failed. */
  reinitializeError?: Error;
}

/** Options of {@link ContinuityClientTransport}. */
export interface ContinuityClientOptions {
  /** Where the session checkpoint persists (default: memory). `fileCheckpoint(path)` survives restarts. */
  checkpoint?: CheckpointStore;
  /** A `fetch` to use (default: the global one). */
  fetch?: (url: URL, init: RequestInit) => Promise<Response>;
  /** Extra headers on every request (authorization, say); a function is called per request. */
  headers?: Record<string, string> | (() => Record<string, string>);
  /** Accept opaque event IDs after a resume instead of re-initializing (default false: seed 000's posture). */
  trustOpaqueIds?: boolean;
  reconnect?: ReconnectOptions;
  /** Open the standalone GET stream (default true). */
  standaloneStream?: boolean;
  /** How often the checkpoint is saved while events flow, ms (default 100). */
  checkpointIntervalMs?: number;
  /** Called after every divergence or session loss, once the client has re-initialized. */
  onDivergence?: (report: DivergenceReport) => void;
  /** The opt-in SSE→WebSocket upgrade (DESIGN §5): ask for it, and follow the offer. */
  upgrade?: { websocket: boolean; maxFrameBytes?: number };
}


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
  readonly reconnect: Required<ReconnectOptions>;
  readonly trustOpaqueIds: boolean;
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
  readonly #posting = new Map<string, Posting>();
  /** Last position per stream, and its persistence. */
  readonly #positions: StreamPositions;
  #standalone: InboundStream | undefined;
  /** The upgraded connection, once open; then every message goes over it. */
  #socket: SocketChannel | undefined;
  #upgrading: Promise<void> | undefined;
  /**
   * While a GET that asked for the upgrade is unanswered, sends wait: a request racing the
   * switch would be refused (409 upgrade-pending) or make the session ineligible.
   */
  #gate: { promise: Promise<void>; open: () => void } | undefined;
  /** Requests sent over the socket and not yet answered (key → id). */
  readonly #socketPending = new Map<string, RequestId>();
  readonly #delivery = new OrderedDelivery((message) => this.onmessage?.(message));
  #abort = new AbortController();
  /** Aborted only when the transport closes. */
  readonly #closing = new AbortController();
  #recovering: Promise<void> | undefined;
  #started = false;
  #closed = false;

  constructor(url: URL | string, options: ContinuityClientOptions = {}) {
    this.url = new URL(url);
    this.#options = options;
    this.reconnect = { ...DEFAULT_RECONNECT, ...options.reconnect };
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
    return this.#socket !== undefined;
  }
  get upgradeRequested(): boolean {
    return this.#options.upgrade?.websocket === true && this.#socket === undefined;
  }

  /**
   * Loads the checkpoint. With one, the SDK `Client` sees a session ID and skips
   * initialize; the standalone stream resumes from where the last process stopped.
   */
  async start(): Promise<void> {
    if (this.#started) throw new Error('ContinuityClientTransport already started');
    this.#started = true;
    let checkpoint: SessionCheckpoint | undefined;
    try {
      checkpoint = await this.#checkpoints.load();
    } catch (error) {
      // A corrupt checkpoint is reported and discarded: the client starts a new session.
      this.report(error instanceof Error ? error : new Error(String(error)));
      await this.#checkpoints.clear().catch(() => {});
    }
    if (!checkpoint) return;
    this.#sessionId = checkpoint.sessionId;
    this.#protocolVersion = checkpoint.protocolVersion;
    this.#epoch = checkpoint.epoch;
    if (checkpoint.initialize) {
      try {
        this.#init = JSON.parse(checkpoint.initialize) as JsonRpcRequest;
      } catch {
        // Without it a lost session cannot be re-initialized; that is reported if it happens.
        this.report(new Error('Ignoring an unreadable initialize request in the checkpoint'));
      }
    }
    this.#positions.restore(checkpoint);
    const standalone = checkpoint.standalone === undefined ? undefined : checkpoint.streams[checkpoint.standalone];
    this.#openStandalone(standalone);
  }

  async send(message: JsonRpcMessage, _options?: { relatedRequestId?: RequestId }): Promise<void> {
    if (this.#closed) throw new Error('Transport closed');
    // Wait until the session is settled: a recovery may open a new upgrade gate, and an
    // upgrade may fail into a recovery.
    for (;;) {
      const wait = this.#recovering ?? this.#gate?.promise ?? this.#upgrading;
      if (!wait) break;
      await wait;
    }
    if (this.#socket) {
      if ('method' in message && 'id' in message) this.#socketPending.set(JSON.stringify(message.id), message.id as RequestId);
      this.#socket.send(message);
      return;
    }
    if ('method' in message && message.method === 'initialize' && 'id' in message) {
      this.#init = message;
      this.#initKey = JSON.stringify(message.id);
    }
    await this.#post(message, true);
  }

  setProtocolVersion(version: string): void {
    this.#protocolVersion = version;
  }

  /** Ends the session on the server (DELETE) and forgets the checkpoint. */
  async terminateSession(): Promise<void> {
    const id = this.#sessionId;
    if (id === undefined) return;
    const response = await this.#fetch(this.url, { method: 'DELETE', headers: this.headers({}) });
    await response.body?.cancel();
    this.#forgetSession();
    await this.#checkpoints.clear();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#closing.abort();
    this.#openGate();
    this.#socket?.close();
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
    this.#openGate();
  }

  deliver(message: JsonRpcMessage): void {
    if ('method' in message && message.method === UPGRADE_ACCEPTED) {
      // Ours, not the application's: the server offers to move this session to a socket.
      this.#followUpgrade(message.params);
      return;
    }
    if (!('method' in message) && 'id' in message && message.id !== null && message.id !== undefined) this.#socketPending.delete(JSON.stringify(message.id));
    if (this.#initKey !== undefined && !('method' in message) && 'id' in message && JSON.stringify(message.id) === this.#initKey) {
      this.#initKey = undefined;
      if ('result' in message && typeof message.result.protocolVersion === 'string') this.#protocolVersion = message.result.protocolVersion;
      this.#positions.schedule(0);
    }
    this.#emit(message);
  }

  #emit(message: JsonRpcMessage): void {
    this.#delivery.push(message);
  }

  advanced(stream: InboundStream): void {
    const position = stream.checkpoint();
    if (!position) return;
    this.#positions.record(stream, position);
    this.#positions.schedule(this.#options.checkpointIntervalMs ?? 100);
  }

  report(error: Error): void {
    this.onerror?.(error);
  }

  async #post(message: JsonRpcMessage, mayRecover: boolean): Promise<void> {
    const session = this.#sessionId;
    const initializing = 'method' in message && message.method === 'initialize';
    const key = 'method' in message && 'id' in message ? JSON.stringify(message.id) : undefined;
    let posting: Posting | undefined;
    if (key !== undefined && 'id' in message) this.#posting.set(key, (posting = newPosting(message.id as RequestId)));
    let response: Response;
    let failedByRecovery = false;
    try {
      response = await this.#fetch(this.url, {
        method: 'POST',
        headers: this.headers({ [Header.Accept]: 'application/json, text/event-stream', [Header.ContentType]: 'application/json' }),
        body: JSON.stringify(message),
        // Not the session's signal: a POST outlives a recovery that finds the session gone,
        // so that its own 404 can tell it ran nowhere and it may be sent again.
        signal: this.#closing.signal,
      });
    } catch (error) {
      // A recovery failed this request with its typed error and aborted the POST: the
      // SDK already has its answer, so the abort is not a second one.
      if (key !== undefined && this.#posting.get(key) !== posting) return;
      if (this.#closed) throw error;
      // The connection failed before any answer: whether the server ran it is unknown,
      // so it is not sent again; the caller gets a typed error to decide.
      throw new ContinuityError('stream-lost', `The request's connection failed before an answer: ${(error as Error).message}`, undefined, { cause: error });
    } finally {
      posting?.answered();
      if (key !== undefined) {
        if (this.#posting.get(key) === posting) this.#posting.delete(key);
        else failedByRecovery = true;
      }
    }
    if (failedByRecovery) {
      // A recovery already answered this request with its typed error while the headers
      // were on their way: whatever the old session says now, the SDK has its answer, and
      // a request failed that way is never sent again.
      await response.body?.cancel().catch(() => {});
      return;
    }
    if (initializing && response.ok) this.#adoptSession(response);
    if (response.status === 404 && session !== undefined && !initializing) {
      // The server says it does not know the session: nothing of this POST ran, so it
      // is safe to send again — after a new session is set up.
      await response.body?.cancel();
      if (!mayRecover) throw new ContinuityError('session-not-found');
      await this.#recover(new ContinuityError('session-not-found'), undefined, session);
      return this.#post(message, false);
    }
    if (!response.ok) {
      const text = await response.text().catch(() => '');
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
      return;
    }
    if ('method' in message && message.method === 'notifications/initialized') this.#openStandalone(undefined);
    const type = response.headers.get(Header.ContentType) ?? '';
    if (response.status === 202 || !response.body) {
      await response.body?.cancel();
      return;
    }
    if (type.includes('text/event-stream')) {
      const stream = new InboundStream(this, 'request', this.#abort.signal);
      if ('method' in message && 'id' in message) stream.pending.set(JSON.stringify(message.id), message.id);
      void this.#run(stream, response);
      return;
    }
    if (type.includes('application/json')) {
      const body = (await response.json()) as JsonRpcMessage | JsonRpcMessage[];
      for (const m of Array.isArray(body) ? body : [body]) this.deliver(m);
      return;
    }
    await response.body.cancel();
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
    const detectMs = stream?.reconnectStartedAt === undefined ? 0 : detectedAt - stream.reconnectStartedAt;
    let failed = 0;
    for (const s of this.#streams) failed += this.#fail(s, error);
    // Requests still waiting for their POST's headers went to the old session too. If that
    // session is gone, their own 404 will say they ran nowhere, and they are sent again on
    // the new one; otherwise they may have run there, so they fail with the typed error.
    const inFlight = [...this.#posting.entries()];
    const failInFlight = (): number => {
      let n = 0;
      for (const [key, p] of inFlight) {
        if (this.#posting.get(key) !== p) continue; // answered meanwhile
        this.#posting.delete(key);
        this.#emit({ jsonrpc: '2.0', id: p.id, error: error.toJsonRpcError() });
        n++;
      }
      return n;
    };
    // Give them a moment to hear their own answer; whatever has none by then fails.
    const inFlightSettled = sessionGone(error)
      ? Promise.race([Promise.all(inFlight.map(([, p]) => p.settled)), delay(POST_GRACE_MS)]).then(failInFlight)
      : Promise.resolve(failInFlight());
    for (const id of this.#socketPending.values()) this.#emit({ jsonrpc: '2.0', id, error: error.toJsonRpcError() });
    failed += this.#socketPending.size;
    this.#socketPending.clear();
    this.#socket?.close();
    this.#socket = undefined;
    this.#abort.abort();
    this.#abort = new AbortController();
    this.#openGate();
    this.#forgetSession();
    this.#recovering = (async () => {
      const report: DivergenceReport = {
        code: error.code, error, previousSessionId: session, sessionId: undefined, failedRequests: failed, detectMs, reinitializeMs: 0,
      };
      const started = Date.now();
      try {
        this.#adopt(await initializeSession(this, this.#init, this.#abort.signal));
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

  /**
   * Follows an upgrade offer: the SSE standalone stream stops (a resume of it now would
   * supersede the session), the socket opens, and sends wait for it. A refused or failed
   * handshake, or a socket lost later, ends the session: the client starts a new one.
   */
  #followUpgrade(params: unknown): void {
    if (!this.#options.upgrade?.websocket || !isUpgradeOffer(params) || this.#upgrading || this.#socket || this.#closed) return;
    const session = this.#sessionId;
    this.#standalone?.stop();
    this.#standalone = undefined;
    const gate = this.#gate;
    this.#upgrading = (async () => {
      try {
        this.#socket = await openSocket(this.url, this.headers({}), params, {
          onMessage: (m) => this.deliver(m),
          onLost: (error) => {
            this.#socket = undefined;
            void this.#recover(error, undefined, session);
          },
          onError: (error) => this.report(error),
        }, this.#options.upgrade?.maxFrameBytes ?? 4 * 1024 * 1024);
      } catch (error) {
        const typed = error instanceof ContinuityError ? error : new ContinuityError('session-superseded', String(error));
        void this.#recover(typed, undefined, session);
      }
    })().finally(() => {
      this.#upgrading = undefined;
    });
    // Sends held by the gate now wait on the upgrade itself.
    if (gate === this.#gate) this.#openGate();
  }

  #openGate(): void {
    const gate = this.#gate;
    this.#gate = undefined;
    gate?.open();
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
    if (this.upgradeRequested && position === undefined && !this.#gate) {
      let open!: () => void;
      const promise = new Promise<void>((resolve) => (open = resolve));
      this.#gate = { promise, open };
    }
    this.#positions.markStandalone(stream);
    void this.#run(stream, undefined);
  }
}

/** A request whose POST has not been answered with headers yet. */
interface Posting {
  id: RequestId;
  /** Resolves once the POST's fetch returned (or failed). */
  settled: Promise<void>;
  answered: () => void;
}

function newPosting(id: RequestId): Posting {
  let answered!: () => void;
  const settled = new Promise<void>((resolve) => (answered = resolve));
  return { id, settled, answered };
}

/**
 * How long a recovery after a lost session waits for POSTs already on their way: a 404
 * of their own proves they ran nowhere, and they are sent again on the new session.
 */
const POST_GRACE_MS = 1000;

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref?.());
}

/** Does `error` say the server no longer knows the session (so it ran nothing of it)? */
function sessionGone(error: ContinuityError): boolean {
  if (error.code === 'session-not-found') return true;
  return error.code === 'session-invalid' && error.detail?.status === 404;
}
