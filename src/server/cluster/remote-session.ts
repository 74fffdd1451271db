/**
 * A session another replica owns, served from here: resumes and standalone streams are
 * replayed from the shared log and tailed; a POST or DELETE is carried to the owner over
 * the bus, and the response stream comes back from the log through this replica.
 */
import { ContinuityError } from '../../protocol/errors.js';
import type { JsonRpcMessage } from '../../protocol/jsonrpc.js';
import type { SessionRecord, Store } from '../../store/types.js';
import type { Cluster, Carried } from './cluster.js';
import { sseHeaders } from '../stream/http.js';
import type { HandleContext } from '../session/context.js';
import type { ResolvedLimits } from '../stream/limits.js';
import { STANDALONE_STREAM } from '../stream/names.js';
import { checkCursor, checkPosition } from '../stream/resume.js';
import { jsonHeaders, type Accepted } from '../session/post.js';
import { SseSink } from '../stream/sse-sink.js';
import { tailStream } from '../stream/tail.js';

export interface RemoteDeps {
  readonly store: Store;
  readonly cluster: Cluster;
  readonly limits: ResolvedLimits;
  readonly keepAliveMs: number;
  /**
   * A tail's watchdog: takes the session over if its owner's lease lapsed. False when the
   * store cannot be reached: the tail then ends, and its client resumes later.
   */
  checkOwner(session: string, takeOver: boolean): Promise<boolean>;
}

export class RemoteSession {
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

  /** `GET` with `Last-Event-ID`: exact replay after the cursor from the shared log, then its tail. */
  async resume(lastEventId: string): Promise<Response> {
    const cursor = checkCursor(lastEventId, this.epoch, this.record.pastEpochs);
    const { log } = this.#deps.store;
    const head = await log.head(this.sessionId, cursor.stream);
    const after = await checkPosition(cursor, head, async (seq) => (await log.read(this.sessionId, cursor.stream, seq - 1, 1))[0]?.chain);
    return this.#tail(cursor.stream, after);
  }

  /** `GET` without `Last-Event-ID`: the standalone stream from now on. */
  async openStandalone(): Promise<Response> {
    const head = await this.#deps.store.log.head(this.sessionId, STANDALONE_STREAM);
    return this.#tail(STANDALONE_STREAM, head?.lastSeq ?? 0);
  }

  /**
   * Carries a POST to the owner. Undefined when the owner did not answer (gone, paused,
   * or no longer the owner): the caller takes the session over and handles it itself.
   */
  async post(messages: JsonRpcMessage[], request: Request, context: HandleContext, batch: boolean): Promise<Response | undefined> {
    const headers: Record<string, string> = {};
    request.headers.forEach((value, key) => {
      headers[key] = value;
    });
    const carried: Carried = { t: 'post', session: this.sessionId, messages, batch, url: request.url, headers };
    if (context.authInfo !== undefined) carried.authInfo = context.authInfo;
    const reply = await this.#carry(carried);
    if (!reply) return undefined;
    const { accepted } = reply;
    if (accepted.kind === 'accepted') return new Response(null, { status: 202 });
    if (accepted.kind === 'json') {
      return new Response(accepted.body, { status: 200, headers: jsonHeaders(this.sessionId, this.epoch) });
    }
    return this.#tail(accepted.stream, 0);
  }

  /** Carries a DELETE to the owner; false when the owner did not answer. */
  async delete(): Promise<boolean> {
    return (await this.#carry({ t: 'delete', session: this.sessionId })) !== undefined;
  }

  async #carry(carried: Carried): Promise<{ ok: true; accepted: Accepted } | undefined> {
    const reply = await this.#deps.cluster.call(this.owner, carried);
    if (!reply) return undefined;
    if (reply.ok) return reply;
    // The replica we reached no longer owns the session: as if it had not answered.
    if (reply.code === 'store-fenced') return undefined;
    throw new ContinuityError(reply.code, reply.message, reply.detail);
  }

  async #tail(stream: string, afterSeq: number): Promise<Response> {
    const { store, cluster, limits, keepAliveMs } = this.#deps;
    const ends: { stop?: () => void; unwatch?: () => void } = {};
    const sink = new SseSink({
      maxBufferedBytes: limits.maxBufferedBytes,
      maxBufferedBytesTotal: limits.maxBufferedBytesTotal,
      stallMs: limits.readerStallMs,
      keepAliveMs,
      onEnd: () => {
        ends.stop?.();
        ends.unwatch?.();
      },
    });
    const bus = cluster.bus;
    ends.stop = await tailStream({ log: store.log, bus, sessionId: this.sessionId, epoch: this.epoch, replayPageSize: limits.replayPageSize }, stream, afterSeq, sink);
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
    return new Response(sink.body, { status: 200, headers: sseHeaders(this.sessionId, this.epoch) });
  }
}
