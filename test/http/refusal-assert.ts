/**
 * Shared assertions for refusals seen over real HTTP. The expected status and JSON-RPC
 * code of each reason are written out here (DESIGN §3 and the error table), not read from
 * `ERRORS`, so a change to the table shows up as a failing test instead of passing silently.
 */
import assert from 'node:assert/strict';
import type { RawResponse } from '../helpers/sse-client.js';

export const EXPECTED = {
  'session-not-found': { status: 404, rpc: -32001 },
  'session-required': { status: 400, rpc: -32000 },
  'session-limit': { status: 503, rpc: -32000 },
  'duplicate-request-id': { status: 400, rpc: -32600 },
  'session-superseded': { status: 410, rpc: -32002 },
  'cursor-invalid': { status: 400, rpc: -32002 },
  'replay-epoch-mismatch': { status: 409, rpc: -32002 },
  'replay-window-exceeded': { status: 410, rpc: -32002 },
  'cursor-ahead': { status: 409, rpc: -32002 },
  'not-acceptable': { status: 406, rpc: -32000 },
  'unsupported-media-type': { status: 415, rpc: -32000 },
  'method-not-allowed': { status: 405, rpc: -32000 },
  'parse-error': { status: 400, rpc: -32700 },
  'invalid-request': { status: 400, rpc: -32600 },
  'batch-unsupported': { status: 400, rpc: -32600 },
  'protocol-version-unsupported': { status: 400, rpc: -32000 },
  'body-too-large': { status: 413, rpc: -32000 },
  'origin-forbidden': { status: 403, rpc: -32000 },
  'host-forbidden': { status: 403, rpc: -32000 },
  'store-unavailable': { status: 503, rpc: -32603 },
  'server-busy': { status: 503, rpc: -32000 },
} as const;

export type Reason = keyof typeof EXPECTED;

export interface RefusalBody {
  jsonrpc: string;
  id: unknown;
  error: { code: number; message: string; data: { reason: string } & Record<string, unknown> };
}

/** Checks a decoded refusal: status, content type, JSON-RPC envelope and reason. */
export function checkRefusal(status: number, contentType: string | null | undefined, text: string, reason: Reason, what = ''): RefusalBody {
  const expected = EXPECTED[reason];
  const label = `${what ? `${what}: ` : ''}${reason}`;
  assert.equal(status, expected.status, `${label}: HTTP status (body: ${text.slice(0, 300)})`);
  assert.notEqual(status, 200, `${label}: never a silent 200`);
  assert.match(String(contentType), /^application\/json\b/i, `${label}: Content-Type`);
  assert.doesNotMatch(String(contentType), /event-stream/i, `${label}: not an SSE stream`);
  // An SSE stream would start with `id:`, `data:`, `retry:`, `event:` or a `:` comment.
  assert.doesNotMatch(text, /^(id|data|retry|event):|^:/m, `${label}: body is not SSE`);
  let body: RefusalBody;
  try {
    body = JSON.parse(text) as RefusalBody;
  } catch {
    assert.fail(`${label}: body is not JSON: ${text.slice(0, 300)}`);
  }
  assert.equal(body.jsonrpc, '2.0', `${label}: jsonrpc`);
  assert.ok('id' in body, `${label}: has an id member`);
  assert.equal(typeof body.error, 'object', `${label}: error object`);
  assert.equal(body.error.code, expected.rpc, `${label}: error.code`);
  assert.equal(typeof body.error.message, 'string', `${label}: error.message`);
  assert.equal(body.error.data?.reason, reason, `${label}: error.data.reason`);
  return body;
}

/** {@link checkRefusal} for a response read with the raw SSE client; also: no SSE event was parsed. */
export function assertRefusal(res: RawResponse, reason: Reason, what = ''): RefusalBody {
  assert.equal(res.events.length, 0, `${what ? `${what}: ` : ''}${reason}: no SSE event delivered`);
  const type = res.headers['content-type'];
  return checkRefusal(res.status, Array.isArray(type) ? type.join(',') : type, res.text, reason, what);
}

/** {@link checkRefusal} for an in-process web `Response`. */
export async function assertWebRefusal(res: Response, reason: Reason, what = ''): Promise<RefusalBody> {
  return checkRefusal(res.status, res.headers.get('content-type'), await res.text(), reason, what);
}

/** The parts of an event ID. */
export function splitId(id: string | undefined): { epoch: string; stream: string; seq: number; chain: string } {
  assert.ok(id, 'event has an id');
  const parts = id.split('.');
  assert.equal(parts.length, 4, `event id has four parts: ${id}`);
  const [epoch, stream, seq, chain] = parts as [string, string, string, string];
  return { epoch, stream, seq: Number(seq), chain };
}

export function joinId(p: { epoch: string; stream: string; seq: number; chain: string }): string {
  return `${p.epoch}.${p.stream}.${p.seq}.${p.chain}`;
}
