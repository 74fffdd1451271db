/** Reading and validating a POST: headers, size, JSON, JSON-RPC shape. */
import { ContinuityError } from '../protocol/errors.js';
import { Header, accepts } from '../protocol/headers.js';
import { classify, type JsonRpcMessage, type JsonRpcRequest } from '../protocol/jsonrpc.js';
import { readBody } from './stream/http.js';
import type { BodyBudget } from './stream/body-budget.js';

export interface PostBody {
  readonly messages: JsonRpcMessage[];
  readonly batch: boolean;
  /** The initialize request, when this POST starts a session. */
  readonly initialize: JsonRpcRequest | undefined;
}

/**
 * Bodies read before the endpoint saw their request (the era router reads a POST once to
 * classify it): `readPost` takes the text from here instead of the consumed stream.
 */
const preRead = new WeakMap<Request, PreRead>();

/** A POST body read (within the limits) before the endpoint saw it: its JSON value, or `invalid`. */
export type PreRead = { readonly json: unknown } | 'invalid';

/** Hands a body already read from `request` to the endpoint's `readPost`. */
export function setPreReadBody(request: Request, body: PreRead): void {
  preRead.set(request, body);
}

/** Reads and validates a POST; every failure is a typed refusal. */
export async function readPost(
  request: Request,
  limits: { maxBodyBytes: number; maxBodyBytesTotal: number },
  jsonResponse: boolean,
  bodies: BodyBudget,
): Promise<PostBody> {
  const accept = request.headers.get(Header.Accept);
  if (!accepts(accept, 'application/json') || (!jsonResponse && !accepts(accept, 'text/event-stream'))) {
    throw new ContinuityError('not-acceptable', 'Not Acceptable: client must accept both application/json and text/event-stream');
  }
  const type = request.headers.get(Header.ContentType);
  if (!type || type.split(';')[0]?.trim().toLowerCase() !== 'application/json') throw new ContinuityError('unsupported-media-type');
  const pre = preRead.get(request);
  if (pre === 'invalid') throw new ContinuityError('parse-error');
  let body: unknown;
  if (pre !== undefined) body = pre.json;
  else {
    const text = await readBody(request, limits.maxBodyBytes, limits.maxBodyBytesTotal, bodies);
    try {
      body = JSON.parse(text);
    } catch {
      throw new ContinuityError('parse-error');
    }
  }
  const batch = Array.isArray(body);
  const messages = (batch ? body : [body]) as JsonRpcMessage[];
  if (messages.length === 0) throw new ContinuityError('invalid-request', 'Invalid Request: empty batch');
  for (const m of messages) classify(m);
  const initialize = messages.find((m): m is JsonRpcRequest => 'method' in m && m.method === 'initialize' && 'id' in m);
  if (initialize && batch) throw new ContinuityError('invalid-request', 'Invalid Request: initialize must not be part of a batch');
  return { messages, batch, initialize };
}
