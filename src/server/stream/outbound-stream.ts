/**
 * One logical outbound stream of a session (the standalone GET stream, or the stream that
 * answers one POST). It numbers and chains events, writes them to the log first, and only
 * then to whichever SSE response is attached, so a message produced while the client is
 * away waits in the log. Appends are group-committed: events queued while one store write
 * is in flight go out together in the next.
 *
 * Latency bound: a producer that awaits each append would otherwise run on microtasks
 * alone, holding the event loop (and every other session's socket) until the backlog
 * limit. After {@link TURN_BYTES} of appends to one stream, or once all producers together
 * have spent the turn's time budget (`./turns.ts`), `append` resolves only on the next
 * turn instead, so a batch closes small and leaves at once.
 */
import { ContinuityError } from '../../protocol/errors.js';
import { chainSeed, eventIdPrefix } from '../../protocol/event-id.js';
import { hashNextChain, utf8Length } from '../../protocol/chain-hash.js';
import { defaultProcess } from './process.js';
import type { Turns } from './turns.js';
import type { LogEvent, StreamHead, StreamInfo } from '../../store/types.js';
import type { EventSink } from './event-sink.js';
import { ReplayPages } from './replay.js';
import type { StreamHost } from './host.js';
import { acceptsAppends, streamTransition, type StreamInput, type StreamPhase } from './phase.js';
import { StreamReader } from './reader.js';

export type { StreamHost } from './host.js';
export type { StreamPhase } from './phase.js';
export { READER_WAIT_MS } from './reader.js';

interface Pending {
  /** Carries its UTF-8 byte count (`bytes`), counted once, for the store and retention. */
  event: LogEvent & { readonly bytes: number };
  /** `retry:` to send with this event when written live (priming events). */
  retry: number | undefined;
}

/** Options of {@link OutboundStream.append}. */
export interface AppendOptions {
  /** `retry:` to send with this event when written live (priming events). */
  retry?: number | undefined;
  /** Resolve only once this event is in the log. */
  durable?: boolean | undefined;
}

/** What {@link OutboundStream.append} returns while the backlog is small: one shared, settled promise. */
const ACCEPTED: Promise<void> = Promise.resolve();

/**
 * Unpersisted payload bytes (UTF-8) a stream accepts before `append` makes its caller
 * wait. Below it, an append resolves without waiting for the store and the next store
 * write carries many events (group commit); above it, the producer is slowed to the
 * store's pace. Either way nothing reaches a socket before it is in the log.
 */
const HIGH_WATER_BYTES = 1024 * 1024;
/**
 * Payload bytes appended to one stream in one event-loop turn before `append` resolves on
 * the next turn. This is what closes a batch: the flush queued on the first append of the
 * turn runs before the producer resumes.
 */
export const TURN_BYTES = 32 * 1024;

interface Waiter {
  seq: number;
  durable: boolean;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** Store write attempts for one batch before the session is given up (see #flush). */
const STORE_ATTEMPTS = [0, 20, 200];

/**
 * The group commit's own cycle, apart from the stream's phase: no flush queued, one queued
 * for the next turn, or one writing to the store (appends meanwhile join its next batch).
 */
type FlushCycle = 'idle' | 'queued' | 'writing';

export class OutboundStream {
  readonly name: string;
  readonly kind: StreamInfo['kind'];
  readonly #host: StreamHost;
  /** Request keys (JSON of the id) this stream still owes a response. */
  readonly #open: Set<string>;
  readonly #reader: StreamReader;
  /** The event loop's turn budget this stream's producers share. */
  readonly #turns: Turns;
  #phase: StreamPhase = 'open';
  /** Why appends are refused, once broken or retired. */
  #failure: ContinuityError | undefined;
  #flushCycle: FlushCycle = 'idle';
  #lastSeq: number;
  #lastChain: string;
  #persistedSeq: number;
  #pending: Pending[] = [];
  /** Bytes appended and not yet in the log (what the high-water mark limits). */
  #pendingBytes = 0;
  /** Bytes appended since this stream's last flush or yield. */
  #turnBytes = 0;
  /** Callers waiting for the backlog to drain below the high-water mark, or for durability. */
  #waiters: Waiter[] = [];

  private constructor(host: StreamHost, name: string, info: StreamInfo, lastSeq: number, lastChain: string, deliveredSeq: number) {
    this.#host = host;
    this.name = name;
    this.kind = info.kind;
    this.#open = new Set(info.requestIds);
    this.#turns = (host.process ?? defaultProcess).turns;
    this.#reader = new StreamReader(eventIdPrefix(host.epoch, name), deliveredSeq);
    this.#lastSeq = lastSeq;
    this.#lastChain = lastChain;
    this.#persistedSeq = lastSeq;
  }

  /** Creates the stream in the log and returns it. */
  static async open(host: StreamHost, name: string, info: StreamInfo): Promise<OutboundStream> {
    const seed = chainSeed(host.epoch, name);
    await host.log.openStream(host.sessionId, name, seed, info, host.fence);
    return new OutboundStream(host, name, info, 0, seed, 0);
  }

  /**
   * Rebuilds a stream an earlier process wrote, continuing its numbering and chain.
   * `info.requestIds` are the requests it still owes; a reader attaching later without a
   * cursor starts after everything stored (the old process may have delivered it).
   */
  static restore(host: StreamHost, name: string, head: StreamHead, info: StreamInfo): OutboundStream {
    return new OutboundStream(host, name, info, head.lastSeq, head.lastChain, head.lastSeq);
  }

  /** Completes a request stream that owes nothing (its process died after the last response). */
  settle(): void {
    if (this.kind === 'request' && this.#open.size === 0 && this.#move('settle')) this.#scheduleFlush();
  }

  /** Where the stream is in its life (see `./phase.ts`). */
  get phase(): StreamPhase {
    return this.#phase;
  }
  get deliveredSeq(): number {
    return this.#reader.deliveredSeq;
  }
  /** The last seq numbered (appended, not necessarily in the log yet). */
  get lastSeq(): number {
    return this.#lastSeq;
  }
  get complete(): boolean {
    return this.#phase === 'complete';
  }
  get hasReader(): boolean {
    return this.#reader.attached;
  }
  get openRequests(): ReadonlySet<string> {
    return this.#open;
  }

  /**
   * Numbers, chains and queues `payload` for the log. Resolves at once while the backlog
   * is small (on the next turn once this turn's appends reach the batch bound), otherwise
   * once the log has caught up; with `durable`, only once this event is in the log. It is
   * written to a reader only after it is in the log. `bytes` is the payload's UTF-8 length,
   * when the caller already counted it (it is counted once, then carried to the store).
   */
  append(payload: string, bytes: number = utf8Length(payload), options?: AppendOptions): Promise<void> {
    if (!acceptsAppends(this.#phase)) {
      return Promise.reject(this.#failure ?? new ContinuityError('stream-complete', undefined, { stream: this.name }));
    }
    const seq = this.#lastSeq + 1;
    const chain = hashNextChain(this.#lastChain, payload);
    this.#lastSeq = seq;
    this.#lastChain = chain;
    const at = this.#host.now();
    this.#pending.push({ event: { seq, chain, payload, bytes, at }, retry: options?.retry });
    this.#pendingBytes += bytes;
    this.#turnBytes += bytes;
    this.#scheduleFlush();
    if (options?.durable === true || this.#pendingBytes > HIGH_WATER_BYTES) {
      const durable = options?.durable === true;
      return new Promise<void>((resolve, reject) => this.#waiters.push({ seq, durable, resolve, reject }));
    }
    const starved = this.#turns.turnBudgetSpent();
    if (!starved && this.#turnBytes < TURN_BYTES) return ACCEPTED;
    return this.#yieldTurn(starved);
  }

  /**
   * Resolves on a later turn than the flush already queued: the batch so far goes to the
   * store and the socket, and other I/O runs, before the producer adds more. A live reader
   * that is behind is waited for first (boundedly).
   */
  #yieldTurn(starved: boolean): Promise<void> {
    this.#turnBytes = 0;
    const paced = this.#reader.paced();
    return paced ? paced.then(() => this.#turns.nextTurn(starved)) : this.#turns.nextTurn(starved);
  }

  /** A response for `key` was appended: once none is owed, the stream completes. */
  answered(key: string): void {
    this.#open.delete(key);
    this.settle();
  }

  /**
   * Attaches a reader that has seen everything up to `afterSeq`: replays the rest from the
   * log in pages, then switches it to live delivery. A previous reader is taken over (closed).
   */
  attach(sink: EventSink, afterSeq: number): Promise<void> {
    const { log, sessionId, replayPageSize } = this.#host;
    return this.#reader.attach(sink, afterSeq, {
      pages: new ReplayPages(log, sessionId, this.name, replayPageSize),
      persistedSeq: () => this.#persistedSeq,
      complete: () => this.#phase === 'complete',
    });
  }

  /** Ends the attached response without ending the stream (SEP-1699 polling). */
  closeReader(retryMs: number | undefined): void {
    this.#reader.close(retryMs);
  }

  /** This stream's log was dropped (a log reset): stop writing it, quietly. */
  retire(): void {
    if (this.#move('retire')) {
      this.#failure = new ContinuityError('replay-epoch-mismatch', 'The stream was retired by a log reset');
      this.#pending = [];
      for (const w of this.#waiters.splice(0)) w.resolve();
    }
    this.detach();
  }

  /** Ends the attached response and forgets it (session terminated). */
  detach(): void {
    this.#reader.detach();
  }

  /** Moves the phase by the table; false (nothing changes) where the input is refused. */
  #move(input: StreamInput): boolean {
    const next = streamTransition(this.#phase, input);
    if (next === undefined) return false;
    this.#phase = next;
    return true;
  }

  /**
   * Flushes on the next turn of the event loop, not the next microtask: a producer that
   * awaits each send (the SDK does) queues many events in between (up to the turn bound),
   * and they go to the store, and to the socket, together.
   */
  #scheduleFlush(): void {
    if (this.#flushCycle !== 'idle') return;
    this.#flushCycle = 'queued';
    this.#turns.atNextTurn(() => {
      // What was appended so far goes out now: the next batch starts empty.
      this.#turnBytes = 0;
      if (this.#flushCycle === 'queued') void this.#flush();
    });
  }

  async #flush(): Promise<void> {
    this.#flushCycle = 'writing';
    try {
      while (this.#pending.length > 0) {
        const batch = this.#pending;
        this.#pending = [];
        try {
          await this.#store(batch);
        } catch (error) {
          this.#broke(error);
          return;
        }
        const last = batch[batch.length - 1] as Pending;
        this.#persistedSeq = last.event.seq;
        for (const p of batch) this.#pendingBytes -= p.event.bytes;
        this.#reader.live(batch);
        this.#releaseWaiters();
      }
      if (this.#move('finish')) await this.#finish().catch((error: unknown) => this.#host.onStoreFailure(error));
    } finally {
      this.#flushCycle = 'idle';
    }
  }

  /**
   * Events callers were told were accepted are not in the log, and numbering cannot go on
   * around them without a silent gap: the stream is broken, and the session with it (its
   * clients get 404 and re-initialize: loud, not lossy). A retired stream fails quietly.
   */
  #broke(error: unknown): void {
    if (!this.#move('store-failed')) return;
    this.#failure = new ContinuityError('store-unavailable', undefined, undefined, { cause: error });
    this.#pending = [];
    for (const w of this.#waiters.splice(0)) w.reject(this.#failure);
    this.#host.onStoreFailure(error);
  }
  /** Writes one batch, retrying briefly: a busy store is not yet a failed one. */
  async #store(batch: Pending[]): Promise<void> {
    const { log, sessionId, fence } = this.#host;
    const events = batch.map((p) => p.event);
    let failure: unknown;
    for (const delay of STORE_ATTEMPTS) {
      if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
      try {
        await log.append(sessionId, this.name, events, fence);
        return;
      } catch (error) {
        // A conflict will not heal by waiting: the log holds another history; a fenced
        // writer lost the session to another replica.
        if (error instanceof ContinuityError && (error.code === 'store-conflict' || error.code === 'store-fenced')) throw error;
        failure = error;
      }
    }
    throw failure;
  }

  #releaseWaiters(): void {
    if (this.#waiters.length === 0) return;
    const drained = this.#pendingBytes <= HIGH_WATER_BYTES;
    const keep: Waiter[] = [];
    for (const w of this.#waiters) {
      if (w.seq <= this.#persistedSeq || (drained && !w.durable)) w.resolve();
      else keep.push(w);
    }
    this.#waiters = keep;
  }

  async #finish(): Promise<void> {
    const { log, sessionId, fence } = this.#host;
    await log.closeStream(sessionId, this.name, fence);
    this.#reader.completed();
    this.#host.onStreamComplete(this);
  }
}
