/**
 * A store that went back in time, noticed by whichever replica a request reaches. Our
 * client sends, with every request, the last event ID it holds of its newest request
 * stream and of the standalone stream (`x-mcp-seen`). An event reaches a client only once
 * it is in the log, so a log without it lost writes it had acknowledged: the stream ends
 * before that position, holds another event there, or is gone though retention cannot
 * have dropped it. Then the session ends (`store-regressed`) rather than continuing on a
 * history the client knows is not the one it saw.
 */
import { ContinuityError } from '../../protocol/errors.js';
import { STANDALONE_STREAM, tryParseEventId, type EventId } from '../../protocol/event-id.js';
import type { EventLog } from '../../store/types.js';

/** Event IDs read from one header: the client sends two; more are ignored. */
const MAX_SEEN = 2;

/** Throws `store-regressed` when the log lacks an event the client says it received. */
export async function checkSeen(log: EventLog, sessionId: string, epoch: string, header: string | null, keepStreams: number): Promise<void> {
  if (header === null) return;
  for (const raw of header.split(',').slice(0, MAX_SEEN)) {
    const id = tryParseEventId(raw.trim());
    // Malformed, of another generation of the log (its cursors say so themselves), or a
    // stream's start: nothing it proves.
    if (id === undefined || id.epoch !== epoch || id.seq === 0) continue;
    if (await lost(log, sessionId, id, keepStreams)) {
      throw new ContinuityError('store-regressed', 'Session ended: the store no longer holds events this client received (a failover or restore lost writes)', {
        stream: id.stream,
        seq: id.seq,
      });
    }
  }
}

async function lost(log: EventLog, sessionId: string, id: EventId, keepStreams: number): Promise<boolean> {
  const head = await log.head(sessionId, id.stream);
  if (head) {
    if (id.seq > head.lastSeq) return true;
    if (id.seq === head.lastSeq) return head.lastChain !== id.chain;
    if (id.seq === head.firstSeq - 1) return head.baseChain !== id.chain;
    // Trimmed by retention: nothing left to compare.
    if (id.seq < head.firstSeq) return false;
    const [event] = await log.read(sessionId, id.stream, id.seq - 1, 1);
    return event !== undefined && event.seq === id.seq && event.chain !== id.chain;
  }
  if (id.stream === STANDALONE_STREAM) return true;
  if (!/^[0-9a-z]+$/.test(id.stream)) return false;
  // Retention drops a completed request stream only once `keepStreams` others completed
  // after it, and those stay: with fewer in the log, this one was never dropped.
  let requests = 0;
  for (const name of await log.streams(sessionId)) if (name !== STANDALONE_STREAM && /^[0-9a-z]+$/.test(name)) requests++;
  return requests < keepStreams;
}
