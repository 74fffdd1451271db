import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { classify, errorResponse, isNotification, isRequest, isResponse, type JsonRpcMessage, type MessageKind } from '../../src/protocol/jsonrpc.js';
import {
  LATEST_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
  accepts,
  allowsBatches,
  isSupportedProtocolVersion,
  supportsPolling,
} from '../../src/protocol/headers.js';
import { ContinuityError, isContinuityError } from '../../src/protocol/errors.js';

describe('jsonrpc: classify accepts valid messages', () => {
  const valid: Array<[string, unknown, MessageKind]> = [
    ['request, string id', { jsonrpc: '2.0', id: 'abc', method: 'tools/list' }, 'request'],
    ['request, empty string id', { jsonrpc: '2.0', id: '', method: 'ping' }, 'request'],
    ['request, number id', { jsonrpc: '2.0', id: 1, method: 'ping' }, 'request'],
    ['request, id 0', { jsonrpc: '2.0', id: 0, method: 'ping' }, 'request'],
    ['request, negative id', { jsonrpc: '2.0', id: -7, method: 'ping' }, 'request'],
    ['request, object params', { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'x', arguments: {} } }, 'request'],
    ['request, large integer id', { jsonrpc: '2.0', id: Number.MAX_SAFE_INTEGER, method: 'ping' }, 'request'],
    ['request, params undefined', { jsonrpc: '2.0', id: 3, method: 'm', params: undefined }, 'request'],
    ['notification', { jsonrpc: '2.0', method: 'notifications/initialized' }, 'notification'],
    ['notification with params', { jsonrpc: '2.0', method: 'notifications/progress', params: { progress: 1 } }, 'notification'],
    ['result, number id', { jsonrpc: '2.0', id: 1, result: {} }, 'response'],
    ['result, string id', { jsonrpc: '2.0', id: 'x', result: { content: [] } }, 'response'],
    ['error', { jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'Method not found' } }, 'response'],
    ['error with data', { jsonrpc: '2.0', id: 's', error: { code: -32002, message: 'm', data: { reason: 'cursor-ahead' } } }, 'response'],
    ['error, id null', { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }, 'response'],
    ['error, empty message', { jsonrpc: '2.0', id: 1, error: { code: 1, message: '' } }, 'response'],
  ];
  for (const [label, value, kind] of valid) {
    it(`${label} → ${kind}`, () => assert.equal(classify(value), kind));
  }

  it('classifies parsed JSON text the same way', () => {
    for (const [, value, kind] of valid) {
      assert.equal(classify(JSON.parse(JSON.stringify(value))), kind);
    }
  });
});

describe('jsonrpc: classify rejects invalid shapes with invalid-request', () => {
  const invalid: Array<[string, unknown]> = [
    ['null', null],
    ['undefined', undefined],
    ['number', 42],
    ['string', '{"jsonrpc":"2.0","id":1,"method":"x"}'],
    ['boolean', true],
    ['array (batch)', [{ jsonrpc: '2.0', id: 1, method: 'x' }]],
    ['empty array', []],
    ['empty object', {}],
    ['missing jsonrpc', { id: 1, method: 'x' }],
    ['jsonrpc 1.0', { jsonrpc: '1.0', id: 1, method: 'x' }],
    ['jsonrpc number 2', { jsonrpc: 2, id: 1, method: 'x' }],
    ['jsonrpc "2"', { jsonrpc: '2', id: 1, method: 'x' }],
    ['jsonrpc " 2.0"', { jsonrpc: ' 2.0', id: 1, method: 'x' }],
    ['params as string', { jsonrpc: '2.0', id: 1, method: 'x', params: 'a' }],
    ['params as number', { jsonrpc: '2.0', id: 1, method: 'x', params: 1 }],
    ['params null', { jsonrpc: '2.0', id: 1, method: 'x', params: null }],
    ['params as array (MCP params are objects)', { jsonrpc: '2.0', id: 1, method: 'x', params: [1, 2] }],
    ['notification params as string', { jsonrpc: '2.0', method: 'x', params: 'a' }],
    ['request id object', { jsonrpc: '2.0', id: {}, method: 'x' }],
    ['request id array', { jsonrpc: '2.0', id: [1], method: 'x' }],
    ['request id true', { jsonrpc: '2.0', id: true, method: 'x' }],
    ['request id false', { jsonrpc: '2.0', id: false, method: 'x' }],
    ['request id null', { jsonrpc: '2.0', id: null, method: 'x' }],
    ['request id undefined', { jsonrpc: '2.0', id: undefined, method: 'x' }],
    ['request id NaN', { jsonrpc: '2.0', id: Number.NaN, method: 'x' }],
    ['request id Infinity', { jsonrpc: '2.0', id: Number.POSITIVE_INFINITY, method: 'x' }],
    ['request id fractional', { jsonrpc: '2.0', id: 1.5, method: 'x' }],
    ['request id unsafe integer', { jsonrpc: '2.0', id: 2 ** 53, method: 'x' }],
    ['request with an unknown member', { jsonrpc: '2.0', id: 1, method: 'x', extra: true }],
    ['request with a result member', { jsonrpc: '2.0', id: 1, method: 'x', result: {} }],
    ['notification with an error member', { jsonrpc: '2.0', method: 'x', error: { code: 1, message: 'm' } }],
    ['method not a string', { jsonrpc: '2.0', id: 1, method: 5 }],
    ['method null', { jsonrpc: '2.0', method: null }],
    ['method not a string beside a result', { jsonrpc: '2.0', id: 1, method: 5, result: {} }],
    ['only jsonrpc', { jsonrpc: '2.0' }],
    ['only id', { jsonrpc: '2.0', id: 1 }],
    ['both result and error', { jsonrpc: '2.0', id: 1, result: {}, error: { code: 1, message: 'm' } }],
    ['result without id', { jsonrpc: '2.0', result: {} }],
    ['result with id null', { jsonrpc: '2.0', id: null, result: {} }],
    ['result with id object', { jsonrpc: '2.0', id: {}, result: {} }],
    ['result with id bool', { jsonrpc: '2.0', id: true, result: {} }],
    ['result with fractional id', { jsonrpc: '2.0', id: 1.5, result: {} }],
    ['result a number', { jsonrpc: '2.0', id: 1, result: 5 }],
    ['result an array', { jsonrpc: '2.0', id: 1, result: [] }],
    ['result null', { jsonrpc: '2.0', id: 1, result: null }],
    ['result with an unknown member', { jsonrpc: '2.0', id: 1, result: {}, extra: 1 }],
    ['response with params', { jsonrpc: '2.0', id: 1, result: {}, params: {} }],
    ['error without id', { jsonrpc: '2.0', error: { code: 1, message: 'm' } }],
    ['error without code', { jsonrpc: '2.0', id: 1, error: { message: 'm' } }],
    ['error with string code', { jsonrpc: '2.0', id: 1, error: { code: '-32600', message: 'm' } }],
    ['error with fractional code', { jsonrpc: '2.0', id: 1, error: { code: 1.5, message: 'm' } }],
    ['error without message', { jsonrpc: '2.0', id: 1, error: { code: -32600 } }],
    ['error with non-string message', { jsonrpc: '2.0', id: 1, error: { code: -32600, message: 5 } }],
    ['error as string', { jsonrpc: '2.0', id: 1, error: 'boom' }],
    ['error null', { jsonrpc: '2.0', id: 1, error: null }],
    ['error as array', { jsonrpc: '2.0', id: 1, error: [-32600] }],
    ['error with an unknown member', { jsonrpc: '2.0', id: 1, error: { code: 1, message: 'm' }, extra: 1 }],
  ];
  for (const [label, value] of invalid) {
    it(label, () => {
      assert.throws(
        () => classify(value),
        (err: unknown) => isContinuityError(err, 'invalid-request') && err.status === 400,
      );
    });
  }
});

describe('jsonrpc: guards and errorResponse', () => {
  it('isRequest / isNotification / isResponse', () => {
    const req: JsonRpcMessage = { jsonrpc: '2.0', id: 1, method: 'm' };
    const note: JsonRpcMessage = { jsonrpc: '2.0', method: 'm' };
    const res: JsonRpcMessage = { jsonrpc: '2.0', id: 1, result: {} };
    const err: JsonRpcMessage = { jsonrpc: '2.0', id: null, error: { code: 1, message: 'm' } };
    assert.deepEqual([isRequest(req), isNotification(req), isResponse(req)], [true, false, false]);
    assert.deepEqual([isRequest(note), isNotification(note), isResponse(note)], [false, true, false]);
    assert.deepEqual([isRequest(res), isNotification(res), isResponse(res)], [false, false, true]);
    assert.deepEqual([isRequest(err), isNotification(err), isResponse(err)], [false, false, true]);
  });

  it('errorResponse wraps a ContinuityError and classifies as a response', () => {
    const r = errorResponse(7, new ContinuityError('cursor-ahead', undefined, { lastSeq: 2 }));
    assert.deepEqual(r, {
      jsonrpc: '2.0',
      id: 7,
      error: { code: -32002, message: 'Cursor is ahead of the event log: events the client saw are missing', data: { reason: 'cursor-ahead', lastSeq: 2 } },
    });
    assert.equal(classify(r), 'response');
    assert.equal(classify(errorResponse(null, new ContinuityError('parse-error'))), 'response');
  });
});

describe('headers: accepts', () => {
  const SSE = 'text/event-stream';
  const JSON_TYPE = 'application/json';
  const cases: Array<[string | null, string, boolean]> = [
    [null, JSON_TYPE, false],
    ['', JSON_TYPE, false],
    [JSON_TYPE, JSON_TYPE, true],
    [JSON_TYPE, SSE, false],
    [`${JSON_TYPE}, ${SSE}`, SSE, true],
    [`${JSON_TYPE}, ${SSE}`, JSON_TYPE, true],
    [`${JSON_TYPE},${SSE}`, SSE, true],
    ['*/*', SSE, true],
    ['*/*', JSON_TYPE, true],
    ['text/*', SSE, true],
    ['text/*', JSON_TYPE, false],
    ['application/*', JSON_TYPE, true],
    ['application/*', SSE, false],
    ['application/json; charset=utf-8', JSON_TYPE, true],
    ['text/event-stream;q=0.9, application/json;q=0.8', SSE, true],
    ['APPLICATION/JSON', JSON_TYPE, true],
    ['Text/Event-Stream', SSE, true],
    ['TEXT/*', SSE, true],
    ['  application/json  ', JSON_TYPE, true],
    ['application/jsonx', JSON_TYPE, false],
    ['application/json-seq', JSON_TYPE, false],
    ['xapplication/json', JSON_TYPE, false],
    ['text/html, image/png', SSE, false],
    ['application', JSON_TYPE, false],
    ['*', JSON_TYPE, false],
    ['text/event-stream-x', SSE, false],
  ];
  for (const [header, type, expected] of cases) {
    it(`${JSON.stringify(header)} accepts ${type}: ${expected}`, () => assert.equal(accepts(header, type), expected));
  }
});

describe('headers: protocol versions', () => {
  it('isSupportedProtocolVersion', () => {
    for (const v of ['2025-03-26', '2025-06-18', '2025-11-25']) assert.equal(isSupportedProtocolVersion(v), true, v);
    for (const v of ['', '2024-11-05', '2025-03-27', '2025-11-25 ', 'latest', '2026-01-01']) assert.equal(isSupportedProtocolVersion(v), false, v);
    assert.equal(isSupportedProtocolVersion(LATEST_PROTOCOL_VERSION), true);
  });

  it('versions are listed oldest first and the latest is last', () => {
    assert.deepEqual([...SUPPORTED_PROTOCOL_VERSIONS].sort(), [...SUPPORTED_PROTOCOL_VERSIONS]);
    assert.equal(SUPPORTED_PROTOCOL_VERSIONS[SUPPORTED_PROTOCOL_VERSIONS.length - 1], LATEST_PROTOCOL_VERSION);
  });

  it('allowsBatches only for 2025-03-26', () => {
    assert.deepEqual(SUPPORTED_PROTOCOL_VERSIONS.map(allowsBatches), [true, false, false]);
  });

  it('supportsPolling only from 2025-11-25', () => {
    assert.deepEqual(SUPPORTED_PROTOCOL_VERSIONS.map(supportsPolling), [false, false, true]);
  });
});

describe('headers: accepts honours q=0', () => {
  it('a media type with q=0 is not acceptable', () => {
    assert.equal(accepts('text/event-stream;q=0, application/json', 'text/event-stream'), false, 'q=0 refuses');
    assert.equal(accepts('text/event-stream; q=0.000', 'text/event-stream'), false, 'q=0.000 refuses');
    assert.equal(accepts('text/event-stream;q=0.5', 'text/event-stream'), true, 'q=0.5 accepts');
  });
});
