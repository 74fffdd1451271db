/**
 * Outgoing messages as event payloads: serialized once, UTF-8 bytes counted, the event
 * size limit held. A response past the limit still answers its request, with an error.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isContinuityError } from '../../src/protocol/errors.js';
import type { JsonRpcMessage } from '../../src/protocol/jsonrpc.js';
import { encodeMessage, encodeResponse } from '../../src/server/session/outgoing.js';

const note = (text: string): JsonRpcMessage => ({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: text } });

describe('outgoing payloads', () => {
  it('a message within the limit: its JSON and UTF-8 byte count (not UTF-16 units)', () => {
    const m = note('héllo €');
    const { payload, bytes } = encodeMessage(m, 1_000);
    assert.equal(payload, JSON.stringify(m));
    assert.equal(bytes, Buffer.byteLength(payload, 'utf8'));
    assert.ok(bytes > payload.length, 'multi-byte characters counted as bytes');
  });

  it('a message past the limit (in bytes) → event-too-large naming the limit', () => {
    const m = note('€'.repeat(40)); // 40 characters, 120 bytes
    const size = Buffer.byteLength(JSON.stringify(m));
    assert.doesNotThrow(() => encodeMessage(m, size));
    assert.throws(
      () => encodeMessage(m, size - 1),
      (e) => isContinuityError(e, 'event-too-large') && (e.detail as { limit?: number }).limit === size - 1,
    );
  });

  it('a response past the limit becomes an event-too-large error answering the same id', () => {
    const big = { jsonrpc: '2.0', id: 'r-7', result: { content: [{ type: 'text', text: 'x'.repeat(500) }] } } as JsonRpcMessage;
    const ok = encodeResponse(big, 'r-7', 10_000);
    assert.equal(ok.payload, JSON.stringify(big));
    const cut = encodeResponse(big, 'r-7', 200);
    const answer = JSON.parse(cut.payload) as { id: unknown; error: { data: { reason: string; limit: number } } };
    assert.equal(answer.id, 'r-7');
    assert.equal(answer.error.data.reason, 'event-too-large');
    assert.equal(answer.error.data.limit, 200);
    assert.equal(cut.bytes, Buffer.byteLength(cut.payload));
  });
});
