/** Building HTTP responses: the one place refusals become status + JSON-RPC body. */
import { ContinuityError, type ErrorCode } from '../../protocol/errors.js';
import { Header } from '../../protocol/headers.js';
import type { RequestId } from '../../protocol/jsonrpc.js';
import type { BodyBudget } from './body-budget.js';
import { defaultProcess } from './process.js';

/**
 * Codes whose message can carry a backend's own words (a Redis reply naming a script, a
 * file path): a client gets the error table's message and the reason, never those words.
 */
const SERVER_SIDE: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['store-unavailable', 'store-conflict', 'store-locked', 'internal-error']);

/** A refusal as an HTTP response with a JSON-RPC error body. */
export function refusal(error: ContinuityError, id: RequestId | null = null, headers?: Record<string, string>): Response {
  const wire = SERVER_SIDE.has(error.code) ? new ContinuityError(error.code, undefined, error.detail) : error;
  const body = JSON.stringify({ jsonrpc: '2.0', id, error: wire.toJsonRpcError() });
  const h: Record<string, string> = { [Header.ContentType]: 'application/json', ...headers };
  if (error.status === 405) h.allow = 'GET, POST, DELETE';
  return new Response(body, { status: error.status, headers: h });
}

/** Any thrown value as a refusal: typed errors keep their status, others become 500. */
export function toRefusal(error: unknown, headers?: Record<string, string>): Response {
  if (error instanceof ContinuityError) return refusal(error, null, headers);
  return refusal(new ContinuityError('internal-error', undefined, undefined, { cause: error }), null, headers);
}

/** Headers of every SSE response. */
export function sseHeaders(sessionId: string, epoch: string): Record<string, string> {
  return {
    [Header.ContentType]: 'text/event-stream',
    'cache-control': 'no-cache, no-transform',
    // Proxies such as nginx buffer responses unless told not to; SSE must flow.
    'x-accel-buffering': 'no',
    [Header.SessionId]: sessionId,
    [Header.ReplayEpoch]: epoch,
  };
}

/**
 * Reads a request body as text, refusing more than `limit` bytes without reading them all
 * (a lying or absent Content-Length cannot make us buffer more), and refusing with
 * `server-busy` (503, retryable) a chunk that would take the bodies being received
 * (counted in `bodies`, the process's by default) past `totalLimit`.
 */
export async function readBody(
  request: Request,
  limit: number,
  totalLimit = Number.POSITIVE_INFINITY,
  bodies: BodyBudget = defaultProcess.bodies,
): Promise<string> {
  const declared = request.headers.get(Header.ContentLength);
  if (declared !== null && Number(declared) > limit) throw tooLarge(limit);
  if (!request.body) return '';
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (size + value.byteLength > limit) {
        await reader.cancel().catch(() => {});
        throw tooLarge(limit);
      }
      if (!bodies.take(value.byteLength, totalLimit)) {
        await reader.cancel().catch(() => {});
        throw new ContinuityError('server-busy', undefined, { limit: totalLimit });
      }
      size += value.byteLength;
      chunks.push(value);
    }
  } finally {
    bodies.give(size);
  }
  const all = new Uint8Array(size);
  let offset = 0;
  for (const c of chunks) {
    all.set(c, offset);
    offset += c.byteLength;
  }
  return new TextDecoder('utf-8', { fatal: false }).decode(all);
}

function tooLarge(limit: number): ContinuityError {
  return new ContinuityError('body-too-large', `Request body exceeds ${limit} bytes`, { limit });
}
