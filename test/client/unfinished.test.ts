/** The requests a checkpoint lists as unfinished, and the ids a restored client sends under. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_UNFINISHED, MAX_UNFINISHED_PARAMS_BYTES, OutstandingRequests, RestoredIds, unfinishedProblem } from '../../src/client/unfinished.js';
import { isSessionCheckpoint, type SessionCheckpoint } from '../../src/client/checkpoint.js';
import type { JsonRpcMessage } from '../../src/protocol/jsonrpc.js';

const call = (id: number | string, params?: Record<string, unknown>): JsonRpcMessage => ({ jsonrpc: '2.0', id, method: 'tools/call', params });

describe('OutstandingRequests', () => {
  it('a request opens, its answer (result or error) or a cancellation closes it', () => {
    const open = new OutstandingRequests();
    assert.equal(open.sent(call(1, { name: 'a' }), 10), true);
    assert.equal(open.sent(call('x'), 11), true);
    assert.equal(open.sent(call(2), 12), true);
    assert.equal(open.sent({ jsonrpc: '2.0', method: 'notifications/initialized' }), false, 'a notification is no request');
    assert.deepEqual(open.list(), [
      { id: 1, method: 'tools/call', sentAt: 10, params: { name: 'a' } },
      { id: 'x', method: 'tools/call', sentAt: 11 },
      { id: 2, method: 'tools/call', sentAt: 12 },
    ]);
    assert.equal(open.received({ jsonrpc: '2.0', id: 1, result: {} }), true);
    assert.equal(open.received({ jsonrpc: '2.0', id: 'x', error: { code: -1, message: 'no' } }), true);
    assert.equal(open.received({ jsonrpc: '2.0', id: 7, result: {} }), false, 'an answer to nothing open');
    assert.equal(open.received({ jsonrpc: '2.0', method: 'notifications/message', params: {} }), false);
    assert.equal(open.sent({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2 } }), true);
    assert.deepEqual(open.list(), []);
  });

  it(`keeps at most ${MAX_UNFINISHED}, the newest, and leaves out params too large to keep`, () => {
    const open = new OutstandingRequests();
    for (let i = 0; i < MAX_UNFINISHED + 5; i++) open.sent(call(i));
    const ids = open.list().map((r) => r.id);
    assert.equal(ids.length, MAX_UNFINISHED);
    assert.equal(ids[0], 5);
    open.sent(call('big', { blob: 'x'.repeat(MAX_UNFINISHED_PARAMS_BYTES) }));
    const big = open.list().find((r) => r.id === 'big');
    assert.ok(big && big.params === undefined);
  });
});

describe('unfinishedProblem / the checkpoint field', () => {
  const base: SessionCheckpoint = { sessionId: 'Jx0Qe3Jt1r8yGk4m', protocolVersion: '2025-11-25', epoch: null, streams: {}, updatedAt: 1 };
  const rows: Array<[string, unknown, string | undefined]> = [
    ['a valid list', [{ id: 1, method: 'tools/call', sentAt: 5, params: { name: 'a' } }], undefined],
    ['a string id', [{ id: 'a', method: 'm', sentAt: 5 }], undefined],
    ['not an array', {}, 'inFlight'],
    ['too many', Array.from({ length: MAX_UNFINISHED + 1 }, (_, i) => ({ id: i, method: 'm', sentAt: 1 })), 'inFlight'],
    ['a fractional id', [{ id: 1.5, method: 'm', sentAt: 1 }], 'inFlight'],
    ['no method', [{ id: 1, sentAt: 1 }], 'inFlight'],
    ['no sentAt', [{ id: 1, method: 'm' }], 'inFlight'],
    ['array params', [{ id: 1, method: 'm', sentAt: 1, params: [] }], 'inFlight'],
    ['params too large', [{ id: 1, method: 'm', sentAt: 1, params: { b: 'x'.repeat(MAX_UNFINISHED_PARAMS_BYTES) } }], 'inFlight'],
  ];
  for (const [name, value, problem] of rows) {
    it(name, () => {
      assert.equal(unfinishedProblem(value), problem);
      assert.equal(isSessionCheckpoint({ ...base, inFlight: value }), problem === undefined);
    });
  }
  it('initializeResult must be a string', () => {
    assert.equal(isSessionCheckpoint({ ...base, initializeResult: '{"protocolVersion":"2025-11-25"}' }), true);
    assert.equal(isSessionCheckpoint({ ...base, initializeResult: { protocolVersion: 'x' } }), false);
  });
});

describe('RestoredIds', () => {
  it('sends a request whose id an unfinished one holds under an id of ours, and answers it under its own', () => {
    const ids = new RestoredIds([{ id: 1, method: 'tools/call', sentAt: 0 }]);
    assert.deepEqual(ids.outgoing(call(0)), call(0), 'a free id goes as it is');
    const sent = ids.outgoing(call(1, { name: 'b' }));
    assert.ok('id' in sent && typeof sent.id === 'string' && sent.id !== '1', JSON.stringify(sent));
    const wire = (sent as { id: string }).id;
    assert.deepEqual(
      ids.outgoing({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, reason: 'r' } }),
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: wire, reason: 'r' } },
      'its cancellation follows it',
    );
    assert.deepEqual(ids.incoming({ jsonrpc: '2.0', id: wire, result: { ok: true } }), { jsonrpc: '2.0', id: 1, result: { ok: true } });
    assert.deepEqual(ids.incoming({ jsonrpc: '2.0', id: wire, result: {} }), { jsonrpc: '2.0', id: wire, result: {} }, 'answered once');
    assert.deepEqual(ids.incoming({ jsonrpc: '2.0', id: 0, result: {} }), { jsonrpc: '2.0', id: 0, result: {} });
  });
});
