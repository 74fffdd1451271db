/**
 * Restart survival, step one: read what an earlier process left in the log and decide what
 * each stream is now. The standalone stream continues; a request stream that was not
 * closed belonged to a request that was in flight when that process died — it can never
 * complete, so its unanswered requests are to be answered with `request-abandoned`.
 */
import { ContinuityError } from '../../protocol/errors.js';
import { errorResponse, type RequestId } from '../../protocol/jsonrpc.js';
import type { EventLog, StreamHead } from '../../store/types.js';
import type { OutboundStream } from '../stream/outbound-stream.js';
import { SOCKET_STREAM, STANDALONE_STREAM } from '../stream/names.js';

export interface OpenStreamPlan {
  name: string;
  head: StreamHead;
  /** Request keys of this stream with no response in the log. */
  unanswered: string[];
}

export interface RehydrationPlan {
  standalone: StreamHead | undefined;
  /** Request streams left open by the dead process, oldest first. */
  open: OpenStreamPlan[];
  /** Closed request streams, oldest first. */
  closed: string[];
  /** The next free request stream number. */
  nextStream: number;
  /** An upgrade to WebSocket was offered: the session cannot continue over SSE (docs/design.md §4). */
  upgraded: boolean;
}

export async function planRehydration(log: EventLog, sessionId: string, pageSize: number): Promise<RehydrationPlan> {
  const plan: RehydrationPlan = { standalone: undefined, open: [], closed: [], nextStream: 1, upgraded: false };
  for (const name of await log.streams(sessionId)) {
    const head = await log.head(sessionId, name);
    if (!head) continue;
    if (name === SOCKET_STREAM) {
      plan.upgraded = true;
      continue;
    }
    if (name === STANDALONE_STREAM) {
      plan.standalone = head;
      continue;
    }
    const n = parseInt(name, 36);
    if (Number.isSafeInteger(n) && n >= plan.nextStream) plan.nextStream = n + 1;
    if (head.closed) {
      plan.closed.push(name);
      continue;
    }
    plan.open.push({ name, head, unanswered: await unansweredKeys(log, sessionId, name, head, pageSize) });
  }
  return plan;
}

/** Request keys of `head` whose response is not in the stored events. */
async function unansweredKeys(log: EventLog, sessionId: string, name: string, head: StreamHead, pageSize: number): Promise<string[]> {
  const open = new Set(head.requestIds);
  // One request per stream is the common case: no response can hide before an open stream's end.
  for (let after = head.firstSeq - 1; open.size > 0;) {
    const events = await log.read(sessionId, name, after, pageSize);
    if (events.length === 0) break;
    for (const e of events) {
      const id = responseId(e.payload);
      if (id !== undefined) open.delete(id);
      after = e.seq;
    }
  }
  return [...open];
}

/** The key (JSON of the id) of a response payload, or undefined for anything else. */
function responseId(payload: string): string | undefined {
  if (payload === '' || !(payload.includes('"result"') || payload.includes('"error"'))) return undefined;
  try {
    const m = JSON.parse(payload) as Record<string, unknown>;
    if ('method' in m || !('id' in m) || m.id === null) return undefined;
    return JSON.stringify(m.id);
  } catch {
    return undefined;
  }
}

/** Answers each request a dead owner left unanswered on `stream` with `request-abandoned`; the stream then completes. */
export function abandonOpen(stream: OutboundStream, unanswered: readonly string[], report: (error: unknown) => void): void {
  const abandoned = new ContinuityError('request-abandoned', 'Request abandoned: the server process handling it stopped; it may have run', {
    mayHaveRun: true,
  });
  for (const key of unanswered) {
    void stream.append(JSON.stringify(errorResponse(JSON.parse(key) as RequestId, abandoned))).catch(report);
    stream.answered(key);
  }
  stream.settle();
}
