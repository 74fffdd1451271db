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
  params?: Record<string, unknown>;
}
export interface JsonRpcNotification {
  jsonrpc: '2.0';
  method: string;
  params?: Record<string, unknown>;
}
export interface JsonRpcResult {
  jsonrpc: '2.0';
  id: RequestId;
  result: Record<string, unknown>;
}
export interface JsonRpcErrorResponse {
  jsonrpc: '2.0';
  id: RequestId | null;
  error: { code: number; message: string; data?: unknown };
}
export type JsonRpcResponse = JsonRpcResult | JsonRpcErrorResponse;
export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

export type MessageKind = 'request' | 'notification' | 'response';

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isId(v: unknown): v is RequestId {
  return (typeof v === 'string') || (typeof v === 'number' && Number.isFinite(v));
}

/** Classifies one message; throws `invalid-request` when it is not JSON-RPC 2.0. */
export function classify(value: unknown): MessageKind {
  if (!isObject(value) || value.jsonrpc !== '2.0') throw notJsonRpc('missing "jsonrpc": "2.0"');
  if ('params' in value && value.params !== undefined && !isObject(value.params) && !Array.isArray(value.params)) {
    throw notJsonRpc('"params" must be an object or array');
  }
  if (typeof value.method === 'string') {
    if (!('id' in value)) return 'notification';
    if (isId(value.id)) return 'request';
    throw notJsonRpc('request "id" must be a string or number');
  }
  if ('result' in value || 'error' in value) {
    if ('result' in value && 'error' in value) throw notJsonRpc('response has both "result" and "error"');
    if (!(isId(value.id) || (value.id === null && 'error' in value))) throw notJsonRpc('response "id" must be a string or number');
    if ('error' in value && !(isObject(value.error) && typeof value.error.code === 'number')) {
      throw notJsonRpc('"error" must be an object with a numeric "code"');
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
