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

/**
 * Writes the events of `stream` after `afterSeq` to `sink` as they reach the log, and
 * closes it once the stream is closed and delivered, once the session's log is gone, or
 * on any store failure (the client resumes later). Returns a function that stops the tail
 * (call it when the sink ends).
 */
export async function tailStream(source: TailSource, stream: string, afterSeq: number, sink: EventSink, priming?: PrimingRetry): Promise<() => void> {
  const { log, bus, sessionId, epoch, replayPageSize } = source;
  const pages = new ReplayPages(log, sessionId, stream, replayPageSize);
  let seq = afterSeq;
  let running = false;
  let again = false;
  let stopped = false;
  /** Read the head (is the stream closed?) only at the start and after a close notice: one read per notice otherwise. */
  let checkHead = true;
  const subscription: { unsubscribe?: () => Promise<void> } = {};

  const stop = (): void => {
    if (stopped) return;
    stopped = true;
    sink.close();
    void subscription.unsubscribe?.().catch(() => {});
  };

  const pump = async (): Promise<void> => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      do {
        again = false;
        for (;;) {
          await sink.drained();
          const events = await pages.next(seq);
          if (stopped || sink.ended) return stop();
          const first = events[0];
          if (!first) break;
          // Trimmed meanwhile: end here; the next resume is refused with 410, never given a gap.
          if (first.seq !== seq + 1) return stop();
          sink.write(events.map((e) => ({
            id: formatEventId({ epoch, stream, seq: e.seq, chain: e.chain }),
            data: e.payload,
            retry: priming?.seq === e.seq && e.payload === '' ? priming.ms : undefined,
          })));
          seq = (events[events.length - 1] ?? first).seq;
        }
        if (checkHead) {
          checkHead = false;
          const head = await log.head(sessionId, stream);
          if (!head || (head.closed && head.lastSeq <= seq)) return stop();
          if (head.closed) again = checkHead = true; // closed with events still to read
        }
      } while (again && !stopped);
    } catch {
      stop();
    } finally {
      running = false;
    }
  };

  const unsubscribe = await bus.subscribeAppends(sessionId, (notice) => {
    // A notice naming no stream (a reconnected bus, or the session ended): re-read, head included.
    if (notice.stream === '') checkHead = true;
    else if (notice.stream !== stream) return;
    if (notice.closed) checkHead = true;
    if (notice.lastSeq > seq || notice.closed || notice.stream === '') void pump();
  });
  subscription.unsubscribe = unsubscribe;
  if (stopped) void unsubscribe().catch(() => {});
  else void pump();
  return stop;
}
