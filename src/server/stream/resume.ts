/**
 * The resume decision (docs/design.md §2), pure: given the cursor a client sent and what the log
 * holds, either the sequence number to replay after, or the refusal that says why
 * continuity cannot be proven. Never "200 and hope".
 */
import { ContinuityError } from '../../protocol/errors.js';
import { parseEventId, type EventId } from '../../protocol/event-id.js';
import type { StreamHead } from '../../store/types.js';

/** Parses a `Last-Event-ID` and checks it belongs to this session's log generation. */
export function checkCursor(raw: string, epoch: string, pastEpochs: readonly string[]): EventId {
  let cursor: EventId;
  try {
    cursor = parseEventId(raw);
  } catch (error) {
    throw new ContinuityError('cursor-invalid', undefined, { cause: 'malformed' }, { cause: error });
  }
  if (cursor.epoch !== epoch) {
    if (pastEpochs.includes(cursor.epoch)) {
      throw new ContinuityError('replay-epoch-mismatch', undefined, { epoch });
    }
    // Not a generation of this session: a cursor from elsewhere never selects anything here.
    throw new ContinuityError('cursor-invalid', undefined, { cause: 'foreign' });
  }
  return cursor;
}

/**
 * Where to replay from. `chainAt(seq)` yields the stored chain of event `seq`, or
 * undefined if it is no longer stored.
 */
export async function checkPosition(cursor: EventId, head: StreamHead | undefined, chainAt: (seq: number) => Promise<string | undefined>): Promise<number> {
  if (!head) throw new ContinuityError('cursor-invalid', undefined, { cause: 'unknown-stream' });
  if (cursor.seq > head.lastSeq) {
    throw new ContinuityError('cursor-ahead', undefined, { lastSeq: head.lastSeq, cursorSeq: cursor.seq });
  }
  if (cursor.seq < head.firstSeq - 1) {
    throw new ContinuityError('replay-window-exceeded', undefined, { firstSeq: head.firstSeq, cursorSeq: cursor.seq });
  }
  const stored = cursor.seq === head.firstSeq - 1 ? head.baseChain : await chainAt(cursor.seq);
  if (stored === undefined) {
    // Trimmed between reading the head and reading the event.
    throw new ContinuityError('replay-window-exceeded', undefined, { cursorSeq: cursor.seq });
  }
  if (stored !== cursor.chain) {
    // Same epoch, stream and seq but other content: not this session's history.
    throw new ContinuityError('cursor-invalid', undefined, { cause: 'chain-mismatch' });
  }
  return cursor.seq;
}
