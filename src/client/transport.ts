/**
 * A client transport for the official SDK `Client` (v1 and v2) that proves continuity on
 * every reconnect, or re-initializes. It speaks the Streamable HTTP transport to any
 * server; against one that carries proof (this project's endpoint) it verifies epoch,
 * sequence and hash chain of every event, against others it applies the safe posture of docs/design.md §3.
 */
import { ContinuityError } from '../protocol/errors.js';
import { DEFAULT_MAX_FRAME_BYTES, Header, UPGRADE_ACCEPTED, UPGRADE_REQUEST_HEADER } from '../protocol/headers.js';
import type { JsonRpcMessage, RequestId } from '../protocol/jsonrpc.js';
import { sleep } from './abort.js';
import { crossOriginPage } from './cors.js';
import { resolveReconnect, type ResolvedReconnect } from './backoff.js';
import type { ContinuityClientOptions } from './options.js';
import { memoryCheckpoint, type CheckpointStore } from './checkpoint.js';

export type { ContinuityClientOptions, DivergenceReport } from './options.js';
export type { UnfinishedRequest } from './unfinished.js';
import type { InboundStream, InboundHost } from './inbound-stream.js';
import { OrderedDelivery } from './delivery.js';
import { initializeSession } from './initialize.js';
import { StreamPositions } from './positions.js';
import { sessionGone } from './refusal.js';
import { Poster } from './post.js';
import { readCheckpoint, restoredStandalone } from './restore.js';
import { sessionKnown } from './restore-probe.js';
import { checkpointBinding, type CheckpointBinding } from './binding.js';
import { Recovery, type RecoveryHost } from './recovery.js';
import { ClientSession } from './session.js';
import type { UnfinishedRequest } from './unfinished.js';
import type { RequestAttempts } from './give-up.js';
import { Outage, endSession } from './ride-through.js';
import { DEFAULT_MAX_EVENT_BYTES } from './sse-reader.js';
import { ClientStreams } from './streams.js';
import { ClientUpgrade } from '#client-upgrade';
import type { Upgrade } from './upgrade.js';
import { upgradeUnavailable } from './socket-offer.js';
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
  /** Who the client talks to: one immutable handle, replaced whole (./session.ts). */
  readonly #session = new ClientSession();
  readonly #options: ContinuityClientOptions;
  readonly #checkpoints: CheckpointStore;
  /** The server URL and principal every checkpoint records, and a restored one must match. */
  readonly #binding: CheckpointBinding;
  readonly #fetch: (url: URL, init: RequestInit) => Promise<Response>;
  /** Last position per stream, and its persistence. */
  readonly #positions: StreamPositions;
  readonly #streams: ClientStreams;
  /** The upgrade: sends wait while a GET that asked for it is unanswered (a request racing the switch would be refused with 409); then every message goes over the socket. */
  readonly #upgrade: Upgrade = new ClientUpgrade();
  readonly #delivery = new OrderedDelivery((message) => this.onmessage?.(message));
  /** Aborted only when the transport closes. */
  readonly #closing = new AbortController();
  readonly #recovery: Recovery;
  readonly #poster: Poster;
  /** Set once the transport gave up (`divergence-limit`): every later send fails with it. */
  #failure: ContinuityError | undefined;
  #started = false;
  #closed = false;
  readonly observer = new ClientObserver((event) => this.#options.onReconnect?.(event));

  constructor(url: URL | string, options: ContinuityClientOptions = {}) {
    this.url = new URL(url);
    this.#options = options;
    this.reconnect = resolveReconnect(options.reconnect);
    this.#recovery = new Recovery(this.reconnect);
    this.maxEventBytes = options.maxEventBytes ?? DEFAULT_MAX_EVENT_BYTES;
    this.trustOpaqueIds = options.trustOpaqueIds ?? false;
    this.#checkpoints = options.checkpoint ?? memoryCheckpoint();
    this.#fetch = options.fetch ?? ((u, init) => fetch(u, init));
    this.#binding = checkpointBinding(this.url, options.principal);
    this.#positions = new StreamPositions(
      this.#checkpoints,
      () => ({ ...this.#session.snapshot(this.#streams.standalone?.checkpoint()), ...this.#binding }),
      (error) => this.report(error),
      options.seen ?? !crossOriginPage(this.url),
    );
    this.#streams = new ClientStreams({
      inbound: this,
      positions: this.#positions,
      sessionId: () => this.#session.handle.id,
      closed: () => this.#closed,
      standaloneOff: options.standaloneStream === false,
      emit: (m) => this.#emit(m),
      recover: (error, stream, session) => this.#recover(error, stream, session),
      report: (error) => this.report(error),
    });
    this.#poster = new Poster({
      url: this.url,
      reconnect: this.reconnect,
      outage: this.outage,
      closing: this.#closing.signal,
      fetch: (url, init) => this.#fetch(url, init),
      headers: (extra) => this.headers(extra),
      closed: () => this.#closed,
      session: () => this.#session.handle,
      swap: (change) => void this.#session.swap(change),
      recover: (error, session) => this.#recover(error, undefined, session),
      failWithSession: (request, error, session) => this.#streams.failWithSession(request, error, session),
      follow: (request, response) => this.#streams.run(this.#streams.forRequest(request), response),
      deliver: (m) => this.deliver(m),
      initialized: () => this.#openStandalone(undefined),
      report: (error) => this.report(error),
    });
  }

  /**
   * The session ID, once initialized (the SDK reads it). After a restore that kept the
   * server's initialize result it reads undefined until the SDK `Client` has sent its
   * initialize, so that the `Client` learns the capabilities (answered from the checkpoint).
   */
  get sessionId(): string | undefined {
    return this.#session.visibleId;
  }

  /**
   * The requests the process that wrote the restored checkpoint had sent and not seen
   * answered when it last saved (empty without a restore). They are never sent again: the
   * server may or may not have run them, and only the application knows whether one may
   * run twice. Their ids are the old process's, unrelated to the new `Client`'s.
   */
  get unfinishedRequests(): readonly UnfinishedRequest[] {
    return this.#session.unfinished;
  }
  get epoch(): string | null {
    return this.#session.handle.epoch;
  }
  get protocolVersion(): string | undefined {
    return this.#session.handle.protocolVersion;
  }
  /** Is the session carried over an upgraded WebSocket? */
  get upgraded(): boolean {
    return this.#upgrade.open;
  }
  get upgradeRequested(): boolean {
    return this.#options.upgrade?.websocket === true && this.#upgrade.supported && !this.#upgrade.open;
  }

  /**
   * Loads the checkpoint. With one, and once the server confirmed it knows its session, the
   * SDK `Client`'s initialize is answered from it and the standalone stream resumes from
   * where the last process stopped; a session the server does not know is dropped (the
   * `Client` initializes on the server). Rejects with a `CheckpointError` for a checkpoint
   * that is corrupt or belongs to another server or principal, leaving it in its store.
   */
  async start(): Promise<void> {
    if (this.#started) throw new ContinuityError('transport-started', 'ContinuityClientTransport already started');
    this.#started = true;
    if (this.#options.upgrade?.websocket === true && !this.#upgrade.supported) this.report(upgradeUnavailable());
    const restored = await readCheckpoint(this.#checkpoints, this.#binding);
    if (!restored) return;
    const { checkpoint } = restored;
    const known = await sessionKnown(this, checkpoint, this.#closing.signal); // before restore: a failed start leaves close nothing to save
    this.#session.restore(restored);
    if (!known) return this.#session.dropRestored();
    this.#positions.restore(checkpoint);
    this.#openStandalone(restoredStandalone(checkpoint));
  }

  async send(sent: JsonRpcMessage, _options?: { relatedRequestId?: RequestId }): Promise<void> {
    if (this.#failure) throw this.#failure;
    if (this.#closed) throw new ContinuityError('endpoint-closed', 'Transport closed');
    // Given up means never sent (./give-up.ts): a cancellation stops its request before anything waits.
    await this.#poster.giveUps.send(sent, (attempts) => this.#send(sent, attempts));
  }

  async #send(sent: JsonRpcMessage, attempts: RequestAttempts | undefined): Promise<void> {
    // Wait until the session is settled: a recovery may open a new upgrade gate, and an
    // upgrade may fail into a recovery.
    let wait: Promise<unknown> | undefined;
    while ((wait = this.#recovery.running ?? this.#upgrade.waitFor)) await wait;
    if (this.#session.answerLocally(sent, (m) => this.#emit(m))) return;
    const { wire: message, changed } = this.#session.sent(sent);
    if (changed) this.#positions.schedule(this.#options.checkpointIntervalMs ?? 100);
    if (this.#upgrade.trySend(message)) return;
    const s = this.#session.handle;
    await this.observer.send(message, s.id, s.protocolVersion, (traced) => this.#poster.post(traced, true, attempts));
  }

  setProtocolVersion(version: string): void {
    this.#session.swap({ protocolVersion: version });
  }

  /** Ends the session on the server (DELETE) and forgets the checkpoint. */
  async terminateSession(): Promise<void> {
    const { id, protocolVersion } = this.#session.handle;
    if (id === undefined) return;
    this.observer.sessionEnded(protocolVersion);
    const signal = this.#closing.signal;
    await endSession(() => this.#fetch(this.url, { method: 'DELETE', headers: this.headers({}), signal }), {
      reconnect: this.reconnect,
      signal,
      outage: this.outage,
      stopped: () => this.#closed,
    });
    this.#forgetSession();
    await this.#checkpoints.clear();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#closing.abort();
    this.#upgrade.close();
    this.#streams.abort();
    await this.#positions.stop().catch((error: unknown) => this.report(error as Error));
    this.onclose?.();
  }

  // InboundHost
  fetch(url: URL, init: RequestInit): Promise<Response> {
    return this.#fetch(url, init);
  }

  headers(extra: Record<string, string>): Headers {
    const h = new Headers(typeof this.#options.headers === 'function' ? this.#options.headers() : this.#options.headers);
    const s = this.#session.handle;
    if (s.id !== undefined) h.set(Header.SessionId, s.id);
    if (s.protocolVersion !== undefined) h.set(Header.ProtocolVersion, s.protocolVersion);
    const seen = this.#positions.seen(); // what this session's client received: the server checks its store still holds it
    for (const [k, v] of Object.entries(seen === undefined ? extra : { [Header.Seen]: seen, ...extra })) h.set(k, v);
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
    if (!('method' in message) && 'id' in message) this.#recovery.answered();
    this.#upgrade.answered(message);
    this.#emit(message);
  }

  /** Hands `received` to the SDK, as the SDK must see it; the checkpoint follows what it closes. */
  #emit(received: JsonRpcMessage): void {
    const { message, changed, initialized } = this.#session.received(received);
    if (changed || initialized) this.#positions.schedule(initialized ? 0 : (this.#options.checkpointIntervalMs ?? 100));
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

  /**
   * After a divergence or a lost session (./recovery.ts): fail every in-flight request of
   * the old session with the typed error, re-initialize, reopen the standalone stream.
   */
  #recover(error: ContinuityError, stream: InboundStream | undefined, session: string | undefined): Promise<void> {
    if (this.#recovery.running) return this.#recovery.running;
    if (session !== this.#session.handle.id) return Promise.resolve(); // that session is already replaced
    const detectMs = stream?.reconnectStartedAt === undefined ? 0 : Date.now() - stream.reconnectStartedAt;
    return this.#recovery.start(this.#recoveryHost, error, session, detectMs);
  }

  readonly #recoveryHost: RecoveryHost = {
    failSession: (error) => {
      this.observer.diverged(error.code, this.#session.handle.protocolVersion);
      let failed = this.#streams.failAll(error);
      // Requests still waiting for their POST's headers went to the old session too. If that
      // session is gone, their own 404 will say they ran nowhere, and they are sent again on
      // the new one; otherwise they may have run there, so they fail with the typed error.
      const settled = this.#poster.posting.failAll(error, sessionGone(error), (m) => this.#emit(m));
      failed += this.#upgrade.fail(error, (m) => this.#emit(m));
      this.#streams.reset();
      this.#forgetSession();
      return { failed, settled };
    },
    backoff: (ms) => sleep(ms, this.#closing.signal, () => new ContinuityError('endpoint-closed', 'Transport closed')),
    reinitialize: async () => {
      const s = await initializeSession(this, this.#session.handle.init, this.#streams.signal);
      // One step: the new session's ID, epoch, version and result together.
      this.#session.swap({ id: s.sessionId, epoch: s.epoch, protocolVersion: s.protocolVersion, initResult: s.result });
      await this.#positions.save();
      this.#openStandalone(undefined);
      return s.sessionId;
    },
    giveUp: (limit) => {
      // Later sends fail with this error, and the transport closes.
      this.#failure = limit;
      queueMicrotask(() => void this.close());
    },
    report: (error) => this.report(error),
    diverged: (report) => this.#options.onDivergence?.(report),
  };

  /** Follows an upgrade offer: the SSE standalone stream stops (a resume of it now would supersede the session). */
  #followUpgrade(params: unknown): void {
    if (!this.#options.upgrade?.websocket || this.#closed) return;
    const session = this.#session.handle.id;
    const host = {
      url: this.url,
      headers: (e: Record<string, string>) => this.headers(e),
      deliver: (m: JsonRpcMessage) => this.deliver(m),
      report: (e: Error) => this.report(e),
      lost: (error: ContinuityError) => void this.#recover(error, undefined, session),
    };
    if (this.#upgrade.follow(params, host, this.#options.upgrade.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES)) this.#streams.stopStandalone();
  }

  #forgetSession(): void {
    this.#session.forget();
    this.#positions.clear();
    this.#streams.forgetStandalone();
  }

  #openStandalone(position: StreamCheckpoint | undefined): void {
    // A fresh standalone stream asks for the upgrade offer: sends wait until it is answered.
    if (this.#streams.openStandalone(position) && this.upgradeRequested && position === undefined) this.#upgrade.closeGate();
  }
}
