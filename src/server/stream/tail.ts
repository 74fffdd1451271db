/**
 * Serving a stream this replica does not write: replay from the shared log, then follow
 * it on the bus's append notices (push, never polling) until the stream closes. A notice
 * is only a hint to read; the log is the truth, so a lost notice delays nothing that the
 * next one (or the close) does not bring. Pages are bounded in bytes as a replay's are,
 * and the next page is read only once the reader has room for it.
 */
import { formatEventId } from '../../protocol/event-id.js';
import type { ClusterBus, EventLog } from '../../store/types.js';
import type { EventSink } from './event-sink.js';
import { ReplayPages } from './replay.js';
import { owesHead, owesPass, tailReading, tailTransition, type TailInput, type TailPhase } from './tail-phase.js';

export interface TailSource {
  readonly log: EventLog;
  readonly bus: ClusterBus;
  readonly sessionId: string;
  readonly epoch: string;
  readonly replayPageSize: number;
}

/** `retry:` sent with the priming event (empty data) at `seq`, as its writer sends it live. */
export interface PrimingRetry {
  readonly seq: number;
  readonly ms: number;
}

/** How a tail starts. */
export interface TailOptions {
  /** `retry:` to send with the stream's priming event. */
  priming?: PrimingRetry | undefined;
  /** The stream answers a call the owner already took: it is never refused (see {@link tailStream}). */
  accepted?: boolean | undefined;
}

/**
 * Writes the events of `stream` after `afterSeq` to `sink` as they reach the log, and
 * closes it once the stream is closed and delivered, once the session's log is gone, or
 * on any store failure (the client resumes later). Returns a function that stops the tail
 * (call it when the sink ends).
 *
 * A failed subscription rejects (nothing was served: the request may be sent again), unless
 * `accepted`: the stream answers a call another replica already took, and a refusal now
 * would invite the client to send it twice. Such a tail reads what the log holds and
 * subscribes again, with backoff, until it is subscribed or stopped.
 */
export async function tailStream(source: TailSource, stream: string, afterSeq: number, sink: EventSink, options: TailOptions = {}): Promise<() => void> {
  const { log, bus, sessionId, epoch, replayPageSize } = source;
  const { priming, accepted = false } = options;
  const pages = new ReplayPages(log, sessionId, stream, replayPageSize);
  let seq = afterSeq;
  /** The head is owed a read from the start ('./tail-phase.ts'). */
  let phase: TailPhase = 'idle-head';
  /** Moves `phase` by the table; false where `input` is refused there (the phase stays). */
  const move = (input: TailInput): boolean => {
    const next = tailTransition(phase, input);
    if (next !== undefined) phase = next;
    return next !== undefined;
  };
  const subscription: { unsubscribe?: () => Promise<void> } = {};

  const stop = (): void => {
    if (!move('stop')) return;
    sink.close();
    void subscription.unsubscribe?.().catch(() => {});
  };

  const pump = async (): Promise<void> => {
    const wasReading = tailReading(phase);
    // A running loop owes itself another pass instead; a stopped tail reads nothing more.
    if (!move('wake') || wasReading) return;
    try {
      do {
        move('pass');
        for (;;) {
          await sink.drained();
          const events = await pages.next(seq);
          if (phase === 'stopped' || sink.ended) return stop();
          const first = events[0];
          if (!first) break;
          // Trimmed meanwhile: end here; the next resume is refused with 410, never given a gap.
          if (first.seq !== seq + 1) return stop();
          sink.write(
            events.map((e) => ({
              id: formatEventId({ epoch, stream, seq: e.seq, chain: e.chain }),
              data: e.payload,
              retry: priming?.seq === e.seq && e.payload === '' ? priming.ms : undefined,
            })),
          );
          seq = (events[events.length - 1] ?? first).seq;
        }
        if (owesHead(phase)) {
          move('head-read');
          const head = await log.head(sessionId, stream);
          if (!head || (head.closed && head.lastSeq <= seq)) return stop();
          if (head.closed) move('closed-unread');
        }
      } while (owesPass(phase));
    } catch {
      stop();
    } finally {
      move('rest');
    }
  };

  const subscribe = (): Promise<() => Promise<void>> =>
    bus.subscribeAppends(sessionId, (notice) => {
      // A notice naming no stream (a reconnected bus, or the session ended): re-read, head included.
      if (notice.stream === '') move('head-owed');
      else if (notice.stream !== stream) return;
      if (notice.closed) move('head-owed');
      if (notice.lastSeq > seq || notice.closed || notice.stream === '') void pump();
    });
  const attach = (unsubscribe: () => Promise<void>): void => {
    subscription.unsubscribe = unsubscribe;
    move('head-owed'); // anything appended before the subscription, the close included
    if (phase === 'stopped') void unsubscribe().catch(() => {});
    else void pump();
  };
  if (accepted) void pump();
  if (accepted) void subscribeUntil(subscribe, attach, () => phase === 'stopped');
  else attach(await subscribe());
  return stop;
}

/** Subscribes, again with backoff after each failure, until subscribed or `stopped()`. */
async function subscribeUntil(
  subscribe: () => Promise<() => Promise<void>>,
  attach: (unsubscribe: () => Promise<void>) => void,
  stopped: () => boolean,
): Promise<void> {
  for (let delay = 25; !stopped(); delay = Math.min(2 * delay, 1_000)) {
    try {
      return attach(await subscribe());
    } catch {
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
