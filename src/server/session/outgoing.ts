/**
 * A message the SDK server sends, as the payload of one event: serialized once, its UTF-8
 * size counted once (then carried to the store and retention), and held to the event
 * size limit. Pure: no I/O.
 */
import { utf8Length } from '../../protocol/chain-hash.js';
import { ContinuityError } from '../../protocol/errors.js';
import { errorResponse, type JsonRpcMessage, type RequestId } from '../../protocol/jsonrpc.js';

export interface Payload {
  payload: string;
  bytes: number;
}

/** `message` as a payload; throws `event-too-large` past `maxEventBytes`. */
export function encodeMessage(message: JsonRpcMessage, maxEventBytes: number): Payload {
  const payload = JSON.stringify(message);
  const bytes = utf8Length(payload);
  if (bytes > maxEventBytes) throw new ContinuityError('event-too-large', undefined, { limit: maxEventBytes });
  return { payload, bytes };
}

/**
 * A response as a payload. One past `maxEventBytes` becomes an `event-too-large` error
 * response to the same request: the request is still answered, never left waiting.
 */
export function encodeResponse(message: JsonRpcMessage, id: RequestId, maxEventBytes: number): Payload {
  const payload = JSON.stringify(message);
  const bytes = utf8Length(payload);
  if (bytes <= maxEventBytes) return { payload, bytes };
  const error = JSON.stringify(errorResponse(id, new ContinuityError('event-too-large', undefined, { limit: maxEventBytes })));
  return { payload: error, bytes: utf8Length(error) };
}
