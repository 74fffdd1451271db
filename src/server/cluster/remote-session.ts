/**
 * A session another replica owns, served from here through the same stream and reader
 * machinery as the owner's: resumes of a finished stream are paged from the shared log
 * exactly as the owner replays them, live streams are tailed, readers count against the
 * session's bound, polling clients get their priming event with `retry:`, and the owner's
 * lifecycle (upgrade gate, DELETE, supersession) holds here too. A POST or DELETE is
 * carried to the owner over the bus, at most once: when its fate cannot be known it is
 * answered `request-abandoned` with `mayHaveRun`, and never run again behind its back.
 */
import { ContinuityError, toError } from '../../protocol/errors.js';
import { supportsPolling, type ProtocolVersion } from '../../protocol/headers.js';
import { isRequest, type JsonRpcMessage } from '../../protocol/jsonrpc.js';
import type { SessionRecord, Store } from '../../store/types.js';
import type { Cluster } from './cluster.js';
import type { Carried, CarriedReply } from './wire.js';
import type { RemoteReaders } from './remote-readers.js';
import { sseHeaders } from '../stream/http.js';
import type { HandleContext } from '../session/context.js';
import { SessionMoved, type PlacedSession } from '../session/placed.js';
import type { ResolvedLimits } from '../stream/limits.js';
import { readerBounds } from '../stream/bounded-writer.js';
import type { ProcessState } from '../stream/process.js';
import { SOCKET_STREAM, STANDALONE_STREAM } from '../stream/names.js';
import { checkCursor, checkPosition } from '../stream/resume.js';
import { jsonHeaders, type Accepted } from '../session/post.js';
import { replayStored } from '../stream/replay.js';
import type { SseSink } from '../stream/sse-sink.js';
import { tailStream } from '../stream/tail.js';
import type { UpgradeDecision } from '../upgrade/gate.js';

export interface RemoteDeps {
  readonly store: Store;
  readonly cluster: Cluster;
  readonly limits: ResolvedLimits;
  readonly keepAliveMs: number;
  readonly retryMs: number;
  readonly readers: RemoteReaders;
  /** The process state its readers count in. */
  readonly process: ProcessState;
  /**
   * A tail's watchdog: takes the session over if its owner's lease lapsed. False when the
   * store cannot be reached: the tail then ends, and its client resumes later.
   */
  checkOwner(session: string, takeOver: boolean): Promise<boolean>;
  onError: (error: Error) => void;
}

/** How {@link RemoteSession} tails a stream. */
interface TailCall {
  /** A GET's reader, counted against the session's bound. */
  readonly counted: boolean;
  /** The stream's priming event, if this client polls. */
  readonly primingSeq?: number;
  /** The stream answers a call the owner took: never refused. */
  readonly accepted?: boolean;
}

export class RemoteSession implements PlacedSession {
  readonly record: SessionRecord;
  /** The replica holding the session's lease. */
  readonly owner: string;
  readonly #deps: RemoteDeps;

  constructor(record: SessionRecord, owner: string, deps: RemoteDeps) {
    this.record = record;
    this.owner = owner;
    this.#deps = deps;
  }

  get sessionId(): string {
    return this.record.id;
  }
  get epoch(): string {
    return this.record.epoch;
  }
  get terminated(): boolean {
    return false;
  }

  /** `GET` with `Last-Event-ID`: exact replay after the cursor from the shared log, then its tail, or the owner's refusal. */
  async resume(lastEventId: string): Promise<Response> {
    const cursor = checkCursor(lastEventId, this.epoch, this.record.pastEpochs);
    const { log } = this.#deps.store;
    // An upgrade was offered (its stream is in the log): a resume is the seed 003 refusal
    // wherever it lands. The owner's gate ends the session; the answer does not wait for it.
    if (await log.head(this.sessionId, SOCKET_STREAM)) {
      void this.#deps.cluster.call(this.owner, { t: 'open', session: this.sessionId, input: 'resume' }).catch(() => {});
      throw new ContinuityError('session-superseded');
    }
    const head = await log.head(this.sessionId, cursor.stream);
    const after = await checkPosition(cursor, head, async (seq) => (await log.read(this.sessionId, cursor.stream, seq - 1, 1))[0]?.chain);
    if (head?.closed) {
      const sink = this.#sink({ counted: true });
      void replayStored(this.#source, cursor.stream, after, sink).catch((error: unknown) => {
        sink.close();
        this.#deps.onError(toError(error));
      });
      return this.#response(sink);
    }
    return this.#tail(cursor.stream, after, { counted: true });
  }

  /** `GET` without `Last-Event-ID`: the owner's gate admits it and logs its priming event; the standalone stream from there. */
  async openStandalone(): Promise<Response> {
    const reply = await this.#carry({ t: 'open', session: this.sessionId, input: 'standalone' }, { runs: false });
    const after = reply.after ?? 0;
    return this.#tail(STANDALONE_STREAM, after, { counted: true, primingSeq: after + 1 });
  }

  /** Carries a POST to the owner; its response stream comes back from the log through this replica. */
  async post(messages: JsonRpcMessage[], request: Request, context: HandleContext, batch: boolean): Promise<Response> {
    const headers: Record<string, string> = {};
    request.headers.forEach((value, key) => {
      headers[key] = value;
    });
    const carried: Carried = { t: 'post', session: this.sessionId, messages, batch, url: request.url, headers };
    if (context.authInfo !== undefined) carried.authInfo = context.authInfo;
    const { accepted } = await this.#carry(carried, { runs: messages.some(isRequest) });
    return this.#answer(accepted);
  }

  /** Carries a DELETE to the owner. */
  async delete(): Promise<void> {
    await this.#carry({ t: 'delete', session: this.sessionId }, { runs: false });
  }

  async handshake(): Promise<UpgradeDecision> {
    throw new ContinuityError('upgrade-invalid', 'The session is owned by another replica');
  }

  async resetLog(): Promise<void> {
    throw new ContinuityError('store-fenced', 'The session is owned by another replica; reset it there');
  }

  #answer(accepted: Accepted): Promise<Response> | Response {
    if (accepted.kind === 'accepted') return new Response(null, { status: 202 });
    if (accepted.kind === 'json') return new Response(accepted.body, { status: 200, headers: jsonHeaders(this.sessionId, this.epoch) });
    return this.#tail(accepted.stream, 0, { counted: false, primingSeq: 1, accepted: true });
  }

  /**
   * Carries `carried` to the owner. A message that certainly did not run (nobody listened,
   * or the replica reached is not the owner) is placed again ({@link SessionMoved}); one
   * whose fate is unknown is never carried again: with requests in it, it is abandoned.
   */
  async #carry(carried: Carried, { runs }: { runs: boolean }): Promise<CarriedReply & { ok: true }> {
    const outcome = await this.#deps.cluster.call(this.owner, carried);
    if (outcome.t === 'undelivered') throw new SessionMoved(this.owner);
    if (outcome.t === 'unknown') {
      if (!runs) {
        // Nothing in it runs twice (a GET's gate, a DELETE, notifications, answers): placed again.
        if (carried.t !== 'post') throw new SessionMoved(this.owner);
        return { ok: true, accepted: { kind: 'accepted' } };
      }
      throw new ContinuityError('request-abandoned', 'The replica running this request stopped answering; it may have run', { mayHaveRun: true });
    }
    const { reply } = outcome;
    if (reply.ok) return reply;
    // The replica we reached does not own the session (by its own clock): it ran nothing.
    // A draining owner took none of it either, and lets the session go as soon as its
    // calls are answered: placed again once it has (taken over here), not refused.
    if (reply.code === 'store-fenced' || reply.code === 'server-draining') throw new SessionMoved(this.owner);
    throw new ContinuityError(reply.code, reply.message, reply.detail);
  }

  get #source() {
    const { store, cluster, limits } = this.#deps;
    return { log: store.log, bus: cluster.bus, sessionId: this.sessionId, epoch: this.epoch, replayPageSize: limits.replayPageSize };
  }

  /** A reader, counted against the session's bound for a GET (`counted`), as on the owner. */
  #sink({ counted, onEnd }: { counted: boolean; onEnd?: () => void }): SseSink {
    const { limits: l, keepAliveMs, readers } = this.#deps;
    const options = { ...readerBounds(l, this.#deps.process), keepAliveMs, onEnd };
    return readers.open(this.sessionId, options, counted ? l.maxReadersPerSession : undefined);
  }

  #response(sink: SseSink): Response {
    return new Response(sink.body, { status: 200, headers: sseHeaders(this.sessionId, this.epoch) });
  }

  /** Follows `stream` from the log after `afterSeq`, as a reader of this replica. */
  async #tail(stream: string, afterSeq: number, { counted, primingSeq, accepted = false }: TailCall): Promise<Response> {
    const { cluster, retryMs } = this.#deps;
    const polling = supportsPolling(this.record.protocolVersion as ProtocolVersion);
    const priming = polling && primingSeq !== undefined ? { seq: primingSeq, ms: retryMs } : undefined;
    const ends: { stop?: () => void; unwatch?: () => void } = {};
    const sink = this.#sink({
      counted,
      onEnd: () => {
        ends.stop?.();
        ends.unwatch?.();
      },
    });
    ends.stop = await tailStream(this.#source, stream, afterSeq, sink, { priming, accepted });
    // While this replica tails a session owned elsewhere, it watches the owner's lease: a
    // dead owner's session is taken over (its unanswered requests then end with
    // request-abandoned, which this tail delivers) without waiting for another request.
    if (!sink.ended) {
      ends.unwatch = cluster.watch(this.sessionId, () => {
        // Only a request stream waits on an answer an orphan owner could owe; the
        // standalone stream's watch just notices an unreachable store.
        void this.#deps.checkOwner(this.sessionId, stream !== STANDALONE_STREAM).then((ok) => ok || sink.close());
      });
    }
    return this.#response(sink);
  }
}
