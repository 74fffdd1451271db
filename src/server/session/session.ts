/**
 * One live session: its record, its SDK server, and what the endpoint asks of it (POSTs,
 * GETs, resumes, the upgrade, its end). Its streams, request table, outbound routing and
 * lasting state are parts of their own.
 */
import { queueMacrotask } from '#turn';
import { randomToken } from '../../protocol/crypto.js';
import { ContinuityError, toError } from '../../protocol/errors.js';
import { supportsPolling, type ProtocolVersion } from '../../protocol/headers.js';
import { isRequest, type JsonRpcMessage, type JsonRpcRequest } from '../../protocol/jsonrpc.js';
import type { EventLog, SessionRecord, Store } from '../../store/types.js';
import { sseHeaders } from '../stream/http.js';
import type { HandleContext, SdkServerLike } from './context.js';
import type { ResolvedLimits } from '../stream/limits.js';
import { readerBounds } from '../stream/bounded-writer.js';
import type { ProcessState } from '../stream/process.js';
import type { OutboundStream } from '../stream/outbound-stream.js';
import { type StreamHost } from '../stream/outbound-stream.js';
import { abandonOpen, planRehydration } from './rehydrate.js';
import { isFenced, postResponse, type Accepted } from './post.js';
import { replayStored } from '../stream/replay.js';
import { checkCursor, checkPosition } from '../stream/resume.js';
import { SessionTransport, messageExtra, type MessageExtra, type SendOptions, type TransportOwner } from './transport.js';
import { SessionUpgrade } from './upgrade.js';
import { RequestTable, idKey } from './request-table.js';
import { LastingState } from './lasting.js';
import { SessionStreams } from './streams.js';
import { Delivery } from './deliver.js';
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
  /** The process state its streams, readers and admission count in. */
  readonly process: ProcessState;
  now(): number;
  onError: (error: Error) => void;
  onEnd(session: Session): void;
}

/** Earlier epochs remembered per session: enough to name a reset, bounded. */
const MAX_PAST_EPOCHS = 8;

export class Session implements StreamHost, TransportOwner {
  readonly record: SessionRecord;
  readonly transport: SessionTransport;
  readonly #deps: SessionDeps;
  #server: SdkServerLike | undefined;
  readonly #streams: SessionStreams;
  readonly #requests: RequestTable;
  readonly #delivery: Delivery;
  #terminated = false;
  #persistedActiveAt: number;
  readonly fence: number | undefined;
  readonly log: EventLog;
  readonly process: ProcessState;
  readonly replayPageSize: number;
  /** Lasting requests and application state, kept with the record to rebuild the session. */
  readonly lasting: LastingState;
  /** The SSE→WebSocket upgrade of this session. */
  readonly upgrade: SessionUpgrade;

  /** `fence`: the fencing token this process holds the session under (clusters). */
  constructor(record: SessionRecord, deps: SessionDeps, fence?: number) {
    this.record = record;
    this.#deps = deps;
    this.fence = fence;
    this.log = deps.store.log;
    this.process = deps.process;
    this.replayPageSize = deps.limits.replayPageSize;
    this.transport = new SessionTransport(record.id, this, () => record.protocolVersion);
    this.#streams = new SessionStreams(this, deps.limits, deps.keepAliveMs);
    this.#requests = new RequestTable(deps.limits.maxInFlightPerSession);
    this.#persistedActiveAt = record.lastActiveAt;
    this.lasting = new LastingState(record, deps.limits, (r) => deps.store.sessions.put(r, fence));
    this.upgrade = new SessionUpgrade(this, {
      streams: this.#streams,
      requests: this.#requests,
      bounds: readerBounds(deps.limits, deps.process),
      receive: (message) => this.transport.receive(message, { requestInfo: { headers: {} } }),
      report: this.#report,
    });
    this.#delivery = new Delivery({
      requests: this.#requests,
      streams: this.#streams,
      socket: this.upgrade.socket,
      lasting: this.lasting,
      maxEventBytes: deps.limits.maxEventBytes,
      receive: (message) => this.transport.receive(message, {}),
      initialized: async (version) => {
        this.record.protocolVersion = version;
        await deps.store.sessions.put(this.record, fence);
      },
      endRefused: () => queueMacrotask(() => void this.terminate().catch(this.#report)),
    });
  }

  // StreamHost
  get sessionId(): string {
    return this.record.id;
  }
  get epoch(): string {
    return this.record.epoch;
  }
  now(): number {
    return this.#deps.now();
  }
  get terminated(): boolean {
    return this.#terminated;
  }

  /** Is any response attached to this session (then it is not idle)? */
  get hasReader(): boolean {
    return this.#streams.hasReader;
  }

  /** Nothing in flight: no request unanswered, no request stream still writing (a drain lets such a session go). */
  get idle(): boolean {
    return this.#requests.size === 0 && this.#streams.openCount === 0;
  }

  /** Opens the standalone stream and connects the SDK server. */
  async start(server: SdkServerLike, initialize: JsonRpcRequest): Promise<void> {
    await this.#streams.openStandalone();
    this.#delivery.expectInitialize(initialize);
    this.transport.useServer((this.#server = server));
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
    await this.#streams.restoreStandalone(plan.standalone);
    this.#streams.names.restore(plan.nextStream, plan.closed);
    this.transport.useServer((this.#server = server));
    await server.connect(this.transport as never);
    await this.#delivery.internal(JSON.parse(this.record.initialize) as JsonRpcRequest);
    this.transport.receive({ jsonrpc: '2.0', method: 'notifications/initialized' }, {});
    // The same session: what the client set for the session's life goes back in, answers dropped.
    await this.lasting.replay((request) => this.#delivery.internal(request), this.#deps.limits.rebuildTimeoutMs);
    for (const { name, head, unanswered } of plan.open) abandonOpen(this.#streams.restoreRequest(name, head, unanswered), unanswered, this.#report);
  }

  /** Handles the messages of one POST (already validated by the endpoint). */
  post(messages: JsonRpcMessage[], request: Request, context: HandleContext, batch: boolean): Promise<Response> {
    const extra = messageExtra(request, context.authInfo, () => this.#streams.standalone.closeReader(this.#retry));
    return postResponse(this, readerBounds(this.#deps.limits, this.#deps.process), this.#deps.keepAliveMs, (attach) =>
      this.accept(messages, extra, batch, attach),
    );
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
      const answers = this.#requests.awaitJson(
        keys,
        requests.map((r) => r.id),
        batch,
      );
      for (const m of messages) this.transport.receive(m, extra);
      return { kind: 'json', body: await answers };
    }

    const stream = await this.#streams.openRequest(keys);
    if (this.#terminated) throw new ContinuityError('session-not-found');
    this.#streams.add(stream);
    this.#requests.onStream(keys, stream);
    attach?.(stream);
    // The priming event is in the log and in the body before the response is returned, so
    // the adapter sends it with the headers: no window in which a client holds a stream
    // without a position to resume from.
    if (this.#polling && !this.#delivery.isInitialize(keys[0])) await stream.append('', 0, { retry: this.#deps.retryMs, durable: true });
    const perRequest: MessageExtra = { ...extra, closeSSEStream: () => stream.closeReader(this.#retry) };
    for (const m of messages) this.transport.receive(m, perRequest);
    return { kind: 'stream', stream: stream.name };
  }

  /** `GET` without `Last-Event-ID`: the standalone stream, from what no reader has been sent yet. */
  async openStandalone(): Promise<Response> {
    const sink = this.#streams.newSink({ counted: true });
    const { standalone } = this.#streams;
    void standalone.attach(sink, standalone.deliveredSeq);
    await this.primeStandalone();
    return new Response(sink.body, { status: 200, headers: sseHeaders(this.sessionId, this.epoch) });
  }

  /** A standalone reader opens, here or on another replica: the priming event is logged for polling clients. Returns the seq it follows. */
  async primeStandalone(): Promise<number> {
    this.touch();
    const { standalone } = this.#streams;
    const after = standalone.lastSeq;
    if (this.#polling) await standalone.append('', 0, { retry: this.#deps.retryMs, durable: true });
    return after;
  }

  /** `GET` with `Last-Event-ID`: exact replay after the cursor, then live events — or a refusal. */
  async resume(lastEventId: string): Promise<Response> {
    this.touch();
    const cursor = checkCursor(lastEventId, this.epoch, this.record.pastEpochs);
    const { log } = this;
    const head = await log.head(this.sessionId, cursor.stream);
    if (!head && this.#streams.names.wasDropped(cursor.stream)) {
      throw new ContinuityError('replay-window-exceeded', 'The stream of this cursor was dropped by retention', { stream: cursor.stream });
    }
    const after = await checkPosition(cursor, head, async (seq) => (await log.read(this.sessionId, cursor.stream, seq - 1, 1))[0]?.chain);
    const sink = this.#streams.newSink({ counted: true });
    const live = this.#streams.live(cursor.stream);
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
    return this.#end({ forget: false });
  }

  /** Ends the session: readers closed, SDK server closed, record and log deleted. */
  terminate(): Promise<void> {
    return this.#end({ forget: true });
  }

  async #end({ forget }: { forget: boolean }): Promise<void> {
    if (this.#terminated) return;
    this.#terminated = true;
    this.upgrade.socket.stop();
    this.#streams.detachAll();
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
    const { store } = this.#deps;
    this.#streams.retireAll();
    await store.log.dropSession(this.sessionId);
    this.record.pastEpochs = [...this.record.pastEpochs, this.record.epoch].slice(-MAX_PAST_EPOCHS);
    this.record.epoch = randomToken(12);
    await store.sessions.put(this.record, this.fence);
    await this.#streams.renew((keys, stream) => this.#requests.onStream(keys, stream));
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
  deliver(message: JsonRpcMessage, options: SendOptions | undefined): Promise<void> {
    if (this.#terminated) return Promise.reject(new ContinuityError('session-not-found'));
    return this.#delivery.deliver(message, options);
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
    this.#delivery.streamCompleted(stream);
    const drop = this.#streams.completed(stream);
    if (drop !== undefined) void this.log.dropStream(this.sessionId, drop).catch(this.#report);
  }

  get #polling(): boolean {
    return supportsPolling(this.record.protocolVersion as ProtocolVersion);
  }

  get #retry(): number | undefined {
    return this.#polling ? this.#deps.retryMs : undefined;
  }

  readonly #report = (error: unknown): void => {
    this.#deps.onError(toError(error));
  };
}
