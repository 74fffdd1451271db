/**
 * Replay from the log, bounded by bytes as well as by count: pages start small and grow
 * while events are small, so neither a read nor a write to a reader ever holds more than
 * about `REPLAY_PAGE_BYTES` (or one event, if a single event is larger). The caller waits
 * for the sink to drain between pages, so a reader that stops reading stops the replay.
 */
import { formatEventId } from '../../protocol/event-id.js';
import type { EventLog, LogEvent } from '../../store/types.js';
import { byteLength } from '../../store/rules.js';
import type { StreamHost } from './host.js';
import type { EventSink } from './event-sink.js';
import { countReplayed } from '../../telemetry/server.js';

/** Payload bytes per replay page (and per write to a reader during a replay). */
export const REPLAY_PAGE_BYTES = 64 * 1024;
/** Events read by the first page; later pages adapt to the events' size. */
const FIRST_PAGE_EVENTS = 16;

/** Reads one stream page by page, each page bounded by `maxEvents` and `maxBytes`. */
export class ReplayPages {
  readonly #log: EventLog;
  readonly #sessionId: string;
  readonly #stream: string;
  readonly #maxEvents: number;
  readonly #maxBytes: number;
  #count: number;

  constructor(log: EventLog, sessionId: string, stream: string, maxEvents: number, maxBytes = REPLAY_PAGE_BYTES) {
    this.#log = log;
    this.#sessionId = sessionId;
    this.#stream = stream;
    this.#maxEvents = maxEvents;
    this.#maxBytes = maxBytes;
    this.#count = Math.min(FIRST_PAGE_EVENTS, maxEvents);
  }

  /**
   * The events after `afterSeq`, as many as fit the byte bound (at least one, if any).
   * Empty when the log holds nothing after it. The caller checks contiguity.
   */
  async next(afterSeq: number): Promise<LogEvent[]> {
    const events = await this.#log.read(this.#sessionId, this.#stream, afterSeq, this.#count);
    let bytes = 0;
    let kept = 0;
    for (const e of events) {
      const size = e.bytes ?? byteLength(e.payload);
      if (kept > 0 && bytes + size > this.#maxBytes) break;
      bytes += size;
      kept++;
    }
    // Aim the next read at the byte bound, from the average event size just seen.
    const average = kept > 0 ? Math.max(1, bytes / kept) : 1;
    this.#count = Math.max(1, Math.min(this.#maxEvents, Math.floor(this.#maxBytes / average)));
    countReplayed(kept, bytes);
    return kept === events.length ? events : events.slice(0, kept);
  }
}

/**
 * Replay of a stream that no live object owns any more (completed, or written by an
 * earlier process): pages from the log to the sink, then the response ends.
 */
export async function replayStored(
  host: Pick<StreamHost, 'log' | 'sessionId' | 'epoch' | 'replayPageSize'>,
  stream: string,
  afterSeq: number,
  sink: EventSink,
): Promise<void> {
  const { log, sessionId, epoch, replayPageSize } = host;
  const pages = new ReplayPages(log, sessionId, stream, replayPageSize);
  let seq = afterSeq;
  for (;;) {
    // Backpressure first: the next page is read only once the reader has room for it.
    await sink.drained();
    if (sink.ended) return;
    const events = await pages.next(seq);
    if (sink.ended) return;
    const first = events[0];
    if (!first) break;
    if (first.seq !== seq + 1) break; // trimmed meanwhile: end here, the next resume is refused with 410
    if (!sink.write(events.map((e) => ({ id: formatEventId({ epoch, stream, seq: e.seq, chain: e.chain }), data: e.payload })))) return;
    seq = (events[events.length - 1] ?? first).seq;
  }
  sink.close();
}
