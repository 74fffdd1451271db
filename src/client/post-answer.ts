/**
 * What a POST's `200` answer must be when it is not an SSE stream: JSON-RPC carrying the
 * request's answer. Anything else fails the request at once with `response-invalid`,
 * naming what came back; dropped, it would wait for the caller's timeout. Pure: no I/O.
 */
import { ContinuityError } from '../protocol/errors.js';
import type { JsonRpcMessage, RequestId } from '../protocol/jsonrpc.js';

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
  return new ContinuityError('response-invalid', `HTTP ${status} with Content-Type ${contentType === '' ? '(none)' : contentType}: neither JSON nor an SSE stream (is this the MCP endpoint?)`);
}
