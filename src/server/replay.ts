/**
 * Replay of a stream that no live object owns any more (completed, or written by an
 * earlier process): pages from the log to the sink, then the response ends.
 */
import { formatEventId } from '../protocol/event-id.js';
import type { StreamHost } from './outbound-stream.js';
import type { EventSink } from './event-sink.js';

export async function replayStored(host: Omit<StreamHost, 'onStreamComplete'>, stream: string, afterSeq: number, sink: EventSink): Promise<void> {
  const { log, sessionId, epoch, replayPageSize } = host;
  let seq = afterSeq;
  for (;;) {
    const events = await log.read(sessionId, stream, seq, replayPageSize);
    if (sink.ended) return;
    const first = events[0];
    if (!first) break;
    if (first.seq !== seq + 1) break; // trimmed meanwhile: end here, the next resume is refused with 410
    sink.write(events.map((e) => ({ id: formatEventId({ epoch, stream, seq: e.seq, chain: e.chain }), data: e.payload })));
    seq = (events[events.length - 1] ?? first).seq;
    await sink.drained();
  }
  sink.close();
}
