/**
 * One live session: its record, its SDK server, its streams, and the routing of every
 * outbound message to the stream it belongs on (a response to the stream of its request,
 * a related message to its request's stream while that is open, anything else to the
 * standalone stream).
 */
import { queueMacrotask } from '#turn';
import { randomToken } from '../../protocol/crypto.js';
import { ContinuityError } from '../../protocol/errors.js';
import { UPGRADE_ACCEPTED, UPGRADE_REQUEST_HEADER, WS_SUBPROTOCOL, supportsPolling, type ProtocolVersion } from '../../protocol/headers.js';
import { isRequest, isResponse, type JsonRpcMessage, type JsonRpcRequest } from '../../protocol/jsonrpc.js';
import type { SessionRecord, Store } from '../../store/types.js';
import { sseHeaders } from '../stream/http.js';
import type { HandleContext, SdkServerLike } from './context.js';
import type { ResolvedLimits } from '../stream/limits.js';
import { OutboundStream, type StreamHost } from '../stream/outbound-stream.js';
import { abandonOpen, planRehydration } from './rehydrate.js';
import { isFenced, postResponse, type Accepted } from './post.js';
import { replayStored } from '../stream/replay.js';
import { checkCursor, checkPosition } from '../stream/resume.js';
import { SessionTransport, messageExtra, type MessageExtra, type SendOptions, type TransportOwner } from './transport.js';
import type { SocketPort } from '../stream/event-sink.js';
import { SessionSocket } from '../upgrade/socket.js';
import { SessionReaders, type SseSink } from '../stream/sse-sink.js';
import { encodeMessage, encodeResponse } from './outgoing.js';
import { RequestTable, idKey } from './request-table.js';
import { STANDALONE_STREAM as STANDALONE, StreamNames } from '../stream/names.js';
import { LastingState } from './lasting.js';
import type { UpgradeAction, UpgradeInput, UpgradeState } from '../upgrade/state.js';
import { countFencedWrite, recordSessionEnd } from '../../telemetry/server.js';

/** What every session shares with its endpoint. */
export interface SessionDeps {
  readonly store: Store;
  readonly limits: ResolvedLimits;
  readonly retryMs: number;
  readonly keepAliveMs: number;
  readonly jsonResponse: boolean;
  /** The store is shared between replicas: a failing write lets the session go instead of ending it. */
  readonly shared: boolean;
  now(): number;
  onError(error: Error): void;
  onEnd(session: Session): void;
}

/** Earlier epochs remembered per session: enough to name a reset, bounded. */
const MAX_PAST_EPOCHS = 8;

export class Session implements StreamHost, TransportOwner {
  readonly record: SessionRecord;
  readonly transport: SessionTransport;
  readonly #deps: SessionDeps;
  #server: SdkServerLike | undefined;
  #standalone!: OutboundStream;
  /** Open request streams by name. Completed ones live only in the log. */
  readonly #streams = new Map<string, OutboundStream>();
  readonly #requests: RequestTable;
  readonly #names: StreamNames;
  #initializeKey: string | undefined;
  /** The SDK refused to initialize: the session ends once that answer is written. */
  #refused: { stream: OutboundStream | undefined } | undefined;
  /** Responses nobody waits for (the replayed initialize of a rehydration). */
  readonly #swallow = new Map<string, () => void>();
  #terminated = false;
  #persistedActiveAt: number;
  readonly #socket = new SessionSocket();
  readonly fence: number | undefined;
  readonly #readers = new SessionReaders();
  /** Lasting requests and application state, kept with the record to rebuild the session. */
  readonly lasting: LastingState;

  /** `fence`: the fencing token this process holds the session under (clusters). */
  constructor(record: SessionRecord, deps: SessionDeps, fence?: number) {
    this.record = record;
    this.#deps = deps;
    this.fence = fence;
    this.transport = new SessionTransport(record.id, this, () => record.protocolVersion);
    this.#names = new StreamNames(deps.limits.maxStreamsPerSession);
    this.#requests = new RequestTable(deps.limits.maxInFlightPerSession);
    this.#persistedActiveAt = record.lastActiveAt;
    this.lasting = new LastingState(record, deps.limits, (r) => deps.store.sessions.put(r, fence));
  }

  // StreamHost
  get sessionId(): string {
    return this.record.id;
  }
  get epoch(): string {
    return this.record.epoch;
  }
  get log() {
    return this.#deps.store.log;
  }
  get replayPageSize(): number {
    return this.#deps.limits.replayPageSize;
  }
  now(): number {
    return this.#deps.now();
  }
  get terminated(): boolean {
    return this.#terminated;
  }

  /** Is any response attached to this session (then it is not idle)? */
  get hasReader(): boolean {
    // Undefined until start() opened it: the sweep may look at a session being created.
    if (this.#standalone?.hasReader) return true;
    for (const s of this.#streams.values()) if (s.hasReader) return true;
    return false;
  }

  /** Nothing in flight: no request unanswered, no request stream still writing (a drain lets such a session go). */
  get idle(): boolean {
    return this.#requests.size === 0 && this.#streams.size === 0;
  }

  /** Opens the standalone stream and connects the SDK server. */
  async start(server: SdkServerLike, initialize: JsonRpcRequest): Promise<void> {
    this.#standalone = await OutboundStream.open(this, STANDALONE, { kind: 'standalone', requestIds: [] });
    this.#initializeKey = idKey(initialize.id);
    this.#server = server;
    await server.connect(this.transport as never);
  }

  /**
   * Rebuilds a session an earlier process left in a durable store: streams continue where
   * the log ends, a fresh SDK server is initialized by replaying the stored initialize,
   * and requests that were in flight when that process died are answered on their
   * streams with `request-abandoned`, so a resuming client fails fast instead of waiting.
   */
  async rehydrate(server: SdkServerLike): Promise<void> {
    const plan = await planRehydration(this.log, this.sessionId, this.replayPageSize);
    // The log holds an upgrade offer: the session moved (or was moving) to a WebSocket
    // that died with the old process. Resuming it over SSE is exactly what the upgrade boundary forbids (docs/design.md §4).
    if (plan.upgraded) throw new ContinuityError('session-superseded');
    this.#standalone = plan.standalone
      ? OutboundStream.restore(this, STANDALONE, plan.standalone, { kind: 'standalone', requestIds: [] })
      : await OutboundStream.open(this, STANDALONE, { kind: 'standalone', requestIds: [] });
    this.#names.restore(plan.nextStream, plan.closed);
    this.#server = server;
    await server.connect(this.transport as never);
    await this.#internal(JSON.parse(this.record.initialize) as JsonRpcRequest);
    this.transport.receive({ jsonrpc: '2.0', method: 'notifications/initialized' }, {});
    // The same session: what the client set for the session's life goes back in, answers dropped.
    await this.lasting.replay((request) => this.#internal(request), this.#deps.limits.rebuildTimeoutMs);
    for (const { name, head, unanswered } of plan.open) {
      const stream = OutboundStream.restore(this, name, head, { kind: 'request', requestIds: unanswered });
      this.#streams.set(name, stream);
      abandonOpen(stream, unanswered, this.#report);
    }
  }

  /** Handles the messages of one POST (already validated by the endpoint). */
  post(messages: JsonRpcMessage[], request: Request, context: HandleContext, batch: boolean): Promise<Response> {
    const extra = messageExtra(request, context.authInfo, () => this.#standalone.closeReader(this.#retry));
    return postResponse(this, this.#deps.limits, this.#deps.keepAliveMs, (attach) => this.accept(messages, extra, batch, attach));
  }

  /**
   * Takes the messages of one POST, here or carried from another replica: notifications
   * and responses go to the SDK server; requests are answered on a new stream in the log
   * (`attach` puts a reader on it before anything is written), or as JSON.
   */
  async accept(messages: JsonRpcMessage[], extra: MessageExtra, batch: boolean, attach?: (stream: OutboundStream) => void): Promise<Accepted> {
    this.touch();
    const requests = messages.filter(isRequest);
    if (requests.length === 0) {
      for (const m of messages) this.transport.receive(m, extra);
      return { kind: 'accepted' };
    }
    const keys = requests.map((r) => idKey(r.id));
    this.lasting.check(requests);
    this.#requests.admit(keys);
    this.lasting.track(requests, keys);
    if (this.#deps.jsonResponse) {
      const answers = this.#requests.awaitJson(keys, requests.map((r) => r.id), batch);
      for (const m of messages) this.transport.receive(m, extra);
      return { kind: 'json', body: await answers };
    }

    const stream = await OutboundStream.open(this, this.#names.next(), { kind: 'request', requestIds: keys });
    if (this.#terminated) throw new ContinuityError('session-not-found');
    this.#streams.set(stream.name, stream);
    this.#requests.onStream(keys, stream);
    attach?.(stream);
    // The priming event is in the log and in the body before the response is returned, so
    // the adapter sends it with the headers: no window in which a client holds a stream
    // without a position to resume from.
    if (this.#polling && this.#initializeKey !== keys[0]) await stream.append('', 0, { retry: this.#deps.retryMs, durable: true });
    const perRequest: MessageExtra = { ...extra, closeSSEStream: () => stream.closeReader(this.#retry) };
    for (const m of messages) this.transport.receive(m, perRequest);
    return { kind: 'stream', stream: stream.name };
  }

  /** `GET` without `Last-Event-ID`: the standalone stream, from what no reader has been sent yet. */
  async openStandalone(): Promise<Response> {
    const sink = this.#newSink(true);
    void this.#standalone.attach(sink, this.#standalone.deliveredSeq);
    await this.primeStandalone();
    return new Response(sink.body, { status: 200, headers: sseHeaders(this.sessionId, this.epoch) });
  }

  /** A standalone reader opens, here or on another replica: the priming event is logged for polling clients. Returns the seq it follows. */
  async primeStandalone(): Promise<number> {
    this.touch();
    const after = this.#standalone.lastSeq;
    if (this.#polling) await this.#standalone.append('', 0, { retry: this.#deps.retryMs, durable: true });
    return after;
  }

  /** `GET` with `Last-Event-ID`: exact replay after the cursor, then live events — or a refusal. */
  async resume(lastEventId: string): Promise<Response> {
    this.touch();
    const cursor = checkCursor(lastEventId, this.epoch, this.record.pastEpochs);
    const { log } = this;
    const head = await log.head(this.sessionId, cursor.stream);
    if (!head && this.#names.wasDropped(cursor.stream)) {
      throw new ContinuityError('replay-window-exceeded', 'The stream of this cursor was dropped by retention', { stream: cursor.stream });
    }
    const after = await checkPosition(cursor, head, async (seq) => (await log.read(this.sessionId, cursor.stream, seq - 1, 1))[0]?.chain);
    const sink = this.#newSink(true);
    const live = cursor.stream === STANDALONE ? this.#standalone : this.#streams.get(cursor.stream);
    if (live && !live.complete) {
      void live.attach(sink, after);
    } else {
      void replayStored(this, cursor.stream, after, sink).catch(this.#report);
    }
    return new Response(sink.body, { status: 200, headers: sseHeaders(this.sessionId, this.epoch) });
  }

  /**
   * Leaves the session for another process (endpoint shutdown on a durable store):
   * readers and the SDK server are closed, the record and log stay.
   */
  shutdown(): Promise<void> {
    return this.#end(false);
  }

  /** Ends the session: readers closed, SDK server closed, record and log deleted. */
  terminate(): Promise<void> {
    return this.#end(true);
  }

  async #end(forget: boolean): Promise<void> {
    if (this.#terminated) return;
    this.#terminated = true;
    this.#socket.stop();
    this.#standalone?.detach();
    for (const s of this.#streams.values()) s.detach();
    this.#streams.clear();
    this.#requests.abandonAll();
    try {
      await this.#server?.close();
    } catch (error) {
      this.#report(error);
    }
    if (forget) {
      const { store } = this.#deps;
      recordSessionEnd(this.record.createdAt, this.#deps.now(), this.record.protocolVersion);
      await store.sessions.delete(this.sessionId);
      await store.log.dropSession(this.sessionId);
      if (this.#deps.shared) await store.bus?.publishAppend(this.sessionId, '', -1).catch(this.#report); // other replicas' readers end
    }
    this.#deps.onEnd(this);
  }

  /**
   * Starts a new generation of the event log: every stored stream is dropped, the epoch
   * rotates (the old one is remembered, so its cursors get `replay-epoch-mismatch`), live
   * readers are closed, and requests still in flight continue on fresh streams.
   */
  async resetLog(): Promise<void> {
    if (this.#terminated) throw new ContinuityError('session-not-found');
    this.#standalone.retire();
    for (const s of this.#streams.values()) s.retire();
    const { store } = this.#deps;
    await store.log.dropSession(this.sessionId);
    this.record.pastEpochs = [...this.record.pastEpochs, this.record.epoch].slice(-MAX_PAST_EPOCHS);
    this.record.epoch = randomToken(12);
    await store.sessions.put(this.record, this.fence);
    this.#names.forgetCompleted();
    this.#standalone = await OutboundStream.open(this, STANDALONE, { kind: 'standalone', requestIds: [] });
    const open = [...this.#streams.values()];
    this.#streams.clear();
    for (const old of open) {
      const keys = [...old.openRequests];
      const stream = await OutboundStream.open(this, this.#names.next(), { kind: 'request', requestIds: keys });
      this.#streams.set(stream.name, stream);
      this.#requests.onStream(keys, stream);
    }
  }

  get upgradeState(): UpgradeState {
    return this.#socket.state;
  }

  /**
   * An upgrade is offered only to a quiet session: no request is answered on an SSE stream.
   * A request stream that owes nothing more counts as quiet while its close is still being
   * written to the store (with a remote store that can outlast the client's next request).
   */
  get canOfferUpgrade(): boolean {
    if (this.#socket.state !== 'sse-active' || this.#requests.size > 0) return false;
    for (const s of this.#streams.values()) if (s.openRequests.size > 0) return false;
    return true;
  }

  /** Feeds the upgrade state machine; a `supersede` action ends the session. */
  async upgradeInput(input: UpgradeInput): Promise<UpgradeAction> {
    const { action } = this.#socket.apply(input);
    if (action === 'supersede') await this.terminate();
    return action;
  }

  /**
   * The offer (state already `upgrade-pending`): `upgrade-accepted` goes into the log
   * before it is written to the standalone stream; from now on every outbound message
   * goes to the socket's stream. The offer expires after `expiresInMs`.
   */
  async offerUpgrade(expiresInMs: number): Promise<Response> {
    this.touch();
    const token = await this.#socket.offer(this, expiresInMs, () => void this.upgradeInput('timeout').catch(this.#report));
    const sink = this.#newSink();
    void this.#standalone.attach(sink, this.#standalone.deliveredSeq);
    const offer = { jsonrpc: '2.0', method: UPGRADE_ACCEPTED, params: { token, subprotocol: WS_SUBPROTOCOL, expiresInMs } };
    await this.#standalone.append(JSON.stringify(offer), undefined, { durable: true });
    // The header says "an offer follows" before the body does, so the client can hold its
    // requests until the socket is open instead of racing the switch.
    return new Response(sink.body, { status: 200, headers: { ...sseHeaders(this.sessionId, this.epoch), [UPGRADE_REQUEST_HEADER]: 'websocket' } });
  }

  /** Which handshake input a presented token is. */
  handshakeInput(token: string | null): UpgradeInput {
    return this.#socket.handshakeInput(token, this.now());
  }

  /**
   * The handshake completed (101 written): the SSE stream ends, JSON-RPC flows both ways
   * on the socket, starting with whatever was logged while the upgrade was pending.
   */
  adoptSocket(port: SocketPort): void {
    this.#standalone.detach();
    this.#socket.adopt(
      port,
      this.#deps.limits,
      (message) => {
        this.touch();
        // Admitted like a POST's requests (in-flight bound, no duplicate ids); a refusal goes back on the socket.
        if (isRequest(message)) this.#requests.admitOn([idKey(message.id)], this.#socket.stream as OutboundStream);
        this.transport.receive(message, { requestInfo: { headers: {} } });
      },
      () => void this.upgradeInput('ws-closed').catch(this.#report),
      this.#report,
    );
  }

  touch(): void {
    const now = this.#deps.now();
    this.record.lastActiveAt = now;
    // Persist activity now and then (not per request), so a durable store's idle sweep
    // after a restart does not expire sessions that were in use.
    if (now - this.#persistedActiveAt > this.#deps.limits.sessionIdleMs / 10) {
      this.#persistedActiveAt = now;
      void this.#deps.store.sessions.put(this.record, this.fence).catch(this.#report);
    }
  }

  // TransportOwner: everything the SDK server sends comes through here.
  async deliver(message: JsonRpcMessage, options: SendOptions | undefined): Promise<void> {
    if (this.#terminated) throw new ContinuityError('session-not-found');
    const socketStream = this.#socket.stream;
    if (socketStream) {
      // Since the upgrade offer everything goes to the socket's stream, and only there:
      // nothing is ever delivered on both transports.
      if (isResponse(message) && message.id !== null && message.id !== undefined) this.#requests.answered(idKey(message.id));
      const { payload, bytes } = encodeMessage(message, this.#deps.limits.maxEventBytes);
      return socketStream.append(payload, bytes);
    }
    if (isResponse(message) && message.id !== null && message.id !== undefined) {
      const key = idKey(message.id);
      const swallow = this.#swallow.get(key);
      if (swallow) {
        this.#swallow.delete(key);
        return swallow();
      }
      if (key === this.#initializeKey) await this.#onInitializeResponse(message);
      await this.lasting.answered(key, message);
      if (this.#requests.resolveJson(key, message)) {
        if (this.#refused) this.#endRefused();
        return;
      }
      const stream = this.#requests.stream(key);
      if (!stream) throw new ContinuityError('internal-error', `No open request ${key} to answer`);
      if (this.#refused) this.#refused.stream = stream;
      const { payload, bytes } = encodeResponse(message, message.id, this.#deps.limits.maxEventBytes);
      this.#requests.answered(key);
      const appended = stream.append(payload, bytes);
      stream.answered(key);
      return appended;
    }
    const related = options?.relatedRequestId;
    const stream = (related !== undefined && this.#requests.stream(idKey(related))) || this.#standalone;
    const { payload, bytes } = encodeMessage(message, this.#deps.limits.maxEventBytes);
    return stream.append(payload, bytes);
  }

  transportClosed(): void {
    void this.terminate().catch(this.#report);
  }

  onStoreFailure(error: unknown): void {
    // A batch still queued when the session ended may meet its dropped log: nothing to report.
    if (this.#terminated) return;
    if (isFenced(error) || this.#deps.shared) {
      // Another replica owns the session now (fenced), or a shared store failed: let go
      // at once, writing nothing; readers end and resume on whoever holds it next.
      if (isFenced(error)) countFencedWrite();
      else this.#report(error);
      void this.shutdown().catch(this.#report);
      return;
    }
    this.#report(error);
    // Terminate: the next request gets 404 and its client re-initializes. The store is
    // failing, so its own cleanup may fail too; that is reported, not retried.
    void this.terminate().catch(this.#report);
  }

  onStreamComplete(stream: OutboundStream): void {
    if (this.#refused?.stream === stream) this.#endRefused();
    this.#streams.delete(stream.name);
    const drop = this.#names.completed(stream.name);
    if (drop !== undefined) void this.log.dropStream(this.sessionId, drop).catch(this.#report);
  }

  get #polling(): boolean {
    return supportsPolling(this.record.protocolVersion as ProtocolVersion);
  }

  get #retry(): number | undefined {
    return this.#polling ? this.#deps.retryMs : undefined;
  }

  readonly #report = (error: unknown): void => {
    this.#deps.onError(error instanceof Error ? error : new Error(String(error)));
  };

  async #onInitializeResponse(message: JsonRpcMessage): Promise<void> {
    this.#initializeKey = undefined;
    const version = 'result' in message ? message.result.protocolVersion : undefined;
    if (typeof version === 'string') {
      this.record.protocolVersion = version;
      await this.#deps.store.sessions.put(this.record, this.fence);
    } else {
      // The SDK refused to initialize: the session must not outlive the answer, but the
      // answer goes out first (ended at once, the client would get an empty 200 stream).
      this.#refused = { stream: undefined };
    }
  }

  /** Hands `request` to the SDK server; resolves once it answered (the answer is dropped). */
  #internal(request: JsonRpcRequest): Promise<void> {
    const answered = new Promise<void>((resolve) => this.#swallow.set(idKey(request.id), resolve));
    this.transport.receive(request, {});
    return answered;
  }

  #endRefused(): void {
    this.#refused = undefined;
    queueMacrotask(() => void this.terminate().catch(this.#report));
  }

  #newSink(counted = false): SseSink {
    const { limits: l, keepAliveMs } = this.#deps; // a GET reader (`counted`) is bounded by maxReadersPerSession
    return this.#readers.open({ maxBufferedBytes: l.maxBufferedBytes, maxBufferedBytesTotal: l.maxBufferedBytesTotal, stallMs: l.readerStallMs, keepAliveMs }, counted ? l.maxReadersPerSession : undefined);
  }
}
