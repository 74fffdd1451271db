/**
 * Minimal JSON-RPC 2.0 shapes and a strict classifier. The SDK validates params; this
 * only has to tell requests, notifications and responses apart, reliably.
 */
import { ContinuityError } from './errors.js';

export type RequestId = string | number;

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: RequestId;
  method: string;
  params?: Record<string, unknown> | undefined;
}
export interface JsonRpcNotification {
  jsonrpc: '2.0';
  method: string;
  params?: Record<string, unknown> | undefined;
}
export interface JsonRpcResult {
  jsonrpc: '2.0';
  id: RequestId;
  result: Record<string, unknown>;
}
export interface JsonRpcErrorResponse {
  jsonrpc: '2.0';
  id?: RequestId | null | undefined;
  error: { code: number; message: string; data?: unknown };
}
export type JsonRpcResponse = JsonRpcResult | JsonRpcErrorResponse;
export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

export type MessageKind = 'request' | 'notification' | 'response';

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** MCP ids are strings or integers (the SDK rejects fractions). */
function isId(v: unknown): v is RequestId {
  return typeof v === 'string' || (typeof v === 'number' && Number.isSafeInteger(v));
}

const REQUEST_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);
const RESPONSE_KEYS = new Set(['jsonrpc', 'id', 'result', 'error']);

/**
 * Classifies one message; throws `invalid-request` when it is not a JSON-RPC 2.0 message
 * as MCP defines it. As strict as the SDK's schemas on purpose: a message we accepted
 * but the SDK silently dropped would leave its request unanswered forever.
 */
export function classify(value: unknown): MessageKind {
  if (!isObject(value) || value.jsonrpc !== '2.0') throw notJsonRpc('missing "jsonrpc": "2.0"');
  if (value.params !== undefined && !isObject(value.params)) throw notJsonRpc('"params" must be an object');
  if (typeof value.method === 'string') {
    for (const k of Object.keys(value)) if (!REQUEST_KEYS.has(k)) throw notJsonRpc(`unexpected member ${JSON.stringify(k.slice(0, 40))}`);
    if (!('id' in value)) return 'notification';
    if (isId(value.id)) return 'request';
    throw notJsonRpc('request "id" must be a string or an integer');
  }
  if ('method' in value) throw notJsonRpc('"method" must be a string');
  if ('result' in value || 'error' in value) {
    for (const k of Object.keys(value)) if (!RESPONSE_KEYS.has(k)) throw notJsonRpc(`unexpected member ${JSON.stringify(k.slice(0, 40))}`);
    if ('result' in value && 'error' in value) throw notJsonRpc('response has both "result" and "error"');
    if ('result' in value && !isObject(value.result)) throw notJsonRpc('"result" must be an object');
    if (!(isId(value.id) || (value.id === null && 'error' in value))) throw notJsonRpc('response "id" must be a string or an integer');
    if ('error' in value && !(isObject(value.error) && Number.isInteger(value.error.code) && typeof value.error.message === 'string')) {
      throw notJsonRpc('"error" must be an object with an integer "code" and a string "message"');
    }
    return 'response';
  }
  throw notJsonRpc('neither a request, a notification nor a response');
}

export function isRequest(m: JsonRpcMessage): m is JsonRpcRequest {
  return 'method' in m && 'id' in m;
}
export function isNotification(m: JsonRpcMessage): m is JsonRpcNotification {
  return 'method' in m && !('id' in m);
}
export function isResponse(m: JsonRpcMessage): m is JsonRpcResponse {
  return !('method' in m) && ('result' in m || 'error' in m);
}

/** A JSON-RPC error response for a {@link ContinuityError}. */
export function errorResponse(id: RequestId | null, err: ContinuityError): JsonRpcErrorResponse {
  return { jsonrpc: '2.0', id, error: err.toJsonRpcError() };
}

function notJsonRpc(why: string): ContinuityError {
  return new ContinuityError('invalid-request', `Invalid Request: ${why}`);
}
