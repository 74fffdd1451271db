/**
 * What a POST's `200` answer must be when it is not an SSE stream: JSON-RPC carrying the
 * request's answer. Anything else fails the request at once with `response-invalid`,
 * naming what came back; dropped, it would wait for the caller's timeout. And the verdict on
 * any POST answer (classifyPost), which the transport acts on. Pure: no I/O.
 */
import { ContinuityError } from '../protocol/errors.js';
import type { JsonRpcMessage, RequestId } from '../protocol/jsonrpc.js';
import { namesSession } from './refusal.js';

function excerpt(text: string): string {
  return JSON.stringify(text.slice(0, 120));
}

/** The messages of a JSON answer; `id`, when the POST was a request, must be answered among them. */
export function jsonAnswer(status: number, text: string, id: RequestId | undefined): JsonRpcMessage[] {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ContinuityError('response-invalid', `HTTP ${status} application/json that does not parse: ${excerpt(text)}`);
  }
  const messages = (Array.isArray(body) ? body : [body]) as JsonRpcMessage[];
  const answers = (m: unknown): boolean => typeof m === 'object' && m !== null && !('method' in m) && 'id' in m && m.id === id;
  if (id !== undefined && !messages.some(answers)) {
    throw new ContinuityError('response-invalid', `HTTP ${status} JSON without the answer to request ${JSON.stringify(id)}: ${excerpt(text)}`);
  }
  return messages;
}

/** The error for a request answered with neither JSON nor an SSE stream. */
export function notAnAnswer(status: number, contentType: string): ContinuityError {
  return new ContinuityError(
    'response-invalid',
    `HTTP ${status} with Content-Type ${contentType === '' ? '(none)' : contentType}: neither JSON nor an SSE stream (is this the MCP endpoint?)`,
  );
}

/** What a POST's answer calls for; {@link classifyPost} decides, the transport acts. */
export type PostVerdict =
  /** The server does not know the session: nothing of the POST ran, it may be sent again on a new one. */
  | { kind: 'session-gone'; status: number }
  /** Refused for another reason: the caller gets a typed error. */
  | { kind: 'refused'; status: number }
  /** The session's log was reset under the client: what it holds cannot be continued. */
  | { kind: 'epoch-changed'; expected: string | null; actual: string }
  /** Accepted with nothing to read (202, or no body). */
  | { kind: 'accepted' }
  /** An SSE stream carries the answer. */
  | { kind: 'stream' }
  /** A JSON body carries the answer. */
  | { kind: 'json' }
  /** Neither JSON nor SSE: a request fails with `response-invalid`, anything else is dropped. */
  | { kind: 'not-an-answer'; contentType: string };

/** What {@link classifyPost} reads of a POST and its answer. */
export interface PostAnswer {
  status: number;
  contentType: string;
  hasBody: boolean;
  /** `X-MCP-Replay-Epoch` of the answer. */
  epoch: string | null;
  /** The session the POST was sent on (undefined before initialize). */
  session: string | undefined;
  /** The epoch the client holds for it. */
  knownEpoch: string | null;
  initializing: boolean;
  /** The body of a 400 on a session, read to see whether it names the session. */
  rejection?: string | undefined;
}

/** Is this answer one whose body must be read before it can be classified (a 400 on a session)? */
export function needsRejectionText(status: number, session: string | undefined, initializing: boolean): boolean {
  return status === 400 && session !== undefined && !initializing;
}

/** The verdict on a POST's answer. Pure: no I/O. */
export function classifyPost(a: PostAnswer): PostVerdict {
  const onSession = a.session !== undefined && !a.initializing;
  if (onSession && (a.status === 404 || (a.rejection !== undefined && namesSession(400, a.rejection)))) return { kind: 'session-gone', status: a.status };
  if (a.status < 200 || a.status > 299) return { kind: 'refused', status: a.status };
  if (onSession && a.epoch !== null && a.epoch !== a.knownEpoch) return { kind: 'epoch-changed', expected: a.knownEpoch, actual: a.epoch };
  if (a.status === 202 || !a.hasBody) return { kind: 'accepted' };
  if (a.contentType.includes('text/event-stream')) return { kind: 'stream' };
  if (a.contentType.includes('application/json')) return { kind: 'json' };
  return { kind: 'not-an-answer', contentType: a.contentType };
}
