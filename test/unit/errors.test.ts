import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ContinuityError, ERRORS, JsonRpcCode, isContinuityError, isErrorCode, type ErrorCode } from '../../src/protocol/errors.js';

const CODES = Object.keys(ERRORS) as ErrorCode[];
const BRAND = Symbol.for('mcp-continuity.error');

/**
 * The contract, written down by hand rather than read from ERRORS: [HTTP status, JSON-RPC
 * code, retryable]. A change to the table must change this too, on purpose.
 */
const EXPECTED: Partial<Record<string, readonly [number, number, boolean]>> = {
  'session-not-found': [404, -32001, false],
  'session-required': [400, -32000, false],
  'session-limit': [503, -32000, true],
  'in-flight-limit': [429, -32000, true],
  'duplicate-request-id': [400, -32600, false],
  'upgrade-pending': [409, -32000, true],
  'upgrade-invalid': [400, -32000, false],
  'session-superseded': [410, -32002, false],
  'session-not-rebuildable': [404, -32001, false],
  'session-state-limit': [400, -32600, false],
  'server-draining': [503, -32000, true],
  'server-unreachable': [503, -32000, true],
  'cursor-invalid': [400, -32002, false],
  'replay-epoch-mismatch': [409, -32002, false],
  'replay-window-exceeded': [410, -32002, false],
  'cursor-ahead': [409, -32002, false],
  'request-abandoned': [500, -32003, false],
  'session-invalid': [502, -32001, false],
  'epoch-changed': [502, -32002, false],
  gap: [502, -32002, false],
  'replay-reset': [502, -32002, false],
  'chain-mismatch': [502, -32002, false],
  'foreign-stream': [502, -32002, false],
  undetectable: [502, -32002, false],
  'stream-lost': [502, -32002, false],
  'cors-refused': [502, -32000, false],
  'checkpoint-corrupt': [500, -32603, false],
  'checkpoint-mismatch': [409, -32603, false],
  'not-acceptable': [406, -32000, false],
  'unsupported-media-type': [415, -32000, false],
  'method-not-allowed': [405, -32000, false],
  'parse-error': [400, -32700, false],
  'invalid-request': [400, -32600, false],
  'batch-unsupported': [400, -32600, false],
  'protocol-version-unsupported': [400, -32000, false],
  'body-too-large': [413, -32000, false],
  'event-too-large': [500, -32603, false],
  'origin-forbidden': [403, -32000, false],
  'host-forbidden': [403, -32000, false],
  'event-id-invalid': [400, -32002, false],
  'sse-field-invalid': [500, -32603, false],
  'store-conflict': [500, -32603, false],
  'store-unavailable': [503, -32603, true],
  'endpoint-closed': [503, -32000, true],
  'internal-error': [500, -32603, false],
  'store-fenced': [503, -32000, true],
  'owner-unavailable': [503, -32000, true],
  'store-regressed': [404, -32001, false],
  'dependency-missing': [500, -32603, false],
  'store-config-mismatch': [500, -32603, false],
  'store-locked': [500, -32603, false],
  'request-malformed': [400, -32000, false],
  'stream-complete': [500, -32603, false],
  'reader-limit': [429, -32000, true],
  'listen-limit': [429, -32000, true],
  'reader-cut': [503, -32000, true],
  'inbound-event-too-large': [502, -32603, false],
  'divergence-limit': [502, -32002, false],
  'server-busy': [503, -32000, true],
  'response-invalid': [502, -32603, false],
  'store-open-failed': [500, -32603, false],
  'store-foreign': [500, -32603, false],
  'bus-event-dropped': [500, -32603, false],
  'restart-failed': [500, -32603, false],
  'inbound-message-invalid': [502, -32603, false],
  'reinitialize-failed': [502, -32000, false],
  'transport-started': [500, -32603, false],
};

/** An object shaped like a ContinuityError made by a second copy of the module (dual package, bundle). */
function foreignError(code: ErrorCode): object {
  class ForeignBase extends Error {}
  Object.defineProperty(ForeignBase.prototype, BRAND, { value: true });
  class ForeignContinuityError extends ForeignBase {
    readonly code = code;
  }
  return new ForeignContinuityError('from another module copy');
}

describe('errors: the table', () => {
  it('has codes', () => {
    assert.ok(CODES.length > 20, 'the table has its codes');
  });

  it('every code has an independently written expectation, and only those codes exist', () => {
    assert.deepEqual([...CODES].sort(), Object.keys(EXPECTED).sort(), 'a new code needs its expected row below');
  });

  for (const code of CODES) {
    it(`${code}: constructs with its expected status, JSON-RPC code and retryability`, () => {
      const expected = EXPECTED[code];
      assert.ok(expected, `${code} has no expected row`);
      const [status, rpcCode, retryable] = expected;
      const err = new ContinuityError(code);
      assert.ok(err instanceof Error, 'is an Error');
      assert.ok(err instanceof ContinuityError, 'is a ContinuityError');
      assert.equal(err.name, 'ContinuityError');
      assert.equal(err.code, code);
      assert.equal(err.status, status);
      assert.equal(err.rpcCode, rpcCode);
      assert.equal(err.retryable, retryable);
      assert.ok(err.message.length > 0 && !/\n/.test(err.message), 'a one-line default message');
      assert.equal(err.detail, undefined);

      const rpc = err.toJsonRpcError();
      assert.deepEqual(rpc, { code: rpcCode, message: err.message, data: { reason: code } });
      assert.deepEqual(err.toData(), { reason: code });
      // The wire form survives JSON.
      assert.deepEqual(JSON.parse(JSON.stringify(rpc)), rpc);
    });

    it(`${code}: isContinuityError and isErrorCode`, () => {
      const err = new ContinuityError(code);
      assert.equal(isContinuityError(err), true);
      assert.equal(isContinuityError(err, code), true);
      const other = CODES.find((c) => c !== code) as ErrorCode;
      assert.equal(isContinuityError(err, other), false);
      assert.equal(isErrorCode(code), true);
      // A code received on the wire maps back to the same typed error.
      const back = new ContinuityError(err.toJsonRpcError().data.reason as ErrorCode);
      assert.equal(back.status, err.status);
    });
  }

  it('statuses are valid HTTP error statuses', () => {
    for (const code of CODES) {
      const { status } = ERRORS[code];
      assert.ok(Number.isInteger(status) && status >= 400 && status <= 599, `${code}: ${status}`);
    }
  });

  it('JSON-RPC codes are integers in the reserved range', () => {
    const known = new Set<number>(Object.values(JsonRpcCode));
    for (const code of CODES) {
      const { rpc } = ERRORS[code];
      assert.ok(Number.isInteger(rpc) && rpc >= -32768 && rpc <= -32000, `${code}: ${rpc}`);
      assert.ok(known.has(rpc), `${code}: ${rpc} is not a JsonRpcCode`);
    }
  });

  it('every code is kebab-case, every message non-empty', () => {
    for (const code of CODES) {
      assert.match(code, /^[a-z]+(-[a-z]+)*$/);
      assert.ok(ERRORS[code].message.length > 0, code);
      assert.equal(typeof ERRORS[code].retryable, 'boolean', code);
    }
  });

  it('the resume refusals are never retryable unchanged', () => {
    const expected: Array<[ErrorCode, number, number]> = [
      ['session-not-found', 404, -32001],
      ['cursor-invalid', 400, -32002],
      ['replay-epoch-mismatch', 409, -32002],
      ['replay-window-exceeded', 410, -32002],
      ['cursor-ahead', 409, -32002],
      ['session-superseded', 410, -32002],
    ];
    for (const [code, status, rpc] of expected) {
      assert.equal(ERRORS[code].status, status, code);
      assert.equal(ERRORS[code].rpc, rpc, code);
      assert.equal(ERRORS[code].retryable, false, `${code} must not be retried unchanged`);
    }
    assert.deepEqual(
      { ...JsonRpcCode },
      {
        ParseError: -32700,
        InvalidRequest: -32600,
        InternalError: -32603,
        ServerError: -32000,
        SessionNotFound: -32001,
        ContinuityRefused: -32002,
        RequestAbandoned: -32003,
      },
    );
  });
});

describe('errors: ContinuityError', () => {
  it('custom message, detail and cause', () => {
    const cause = new Error('root');
    const err = new ContinuityError('cursor-ahead', 'custom', { lastSeq: 3, cursorSeq: 9 }, { cause });
    assert.equal(err.message, 'custom');
    assert.equal(err.cause, cause);
    assert.deepEqual(err.detail, { lastSeq: 3, cursorSeq: 9 });
    assert.deepEqual(err.toData(), { reason: 'cursor-ahead', lastSeq: 3, cursorSeq: 9 });
    assert.deepEqual(err.toJsonRpcError(), {
      code: -32002,
      message: 'custom',
      data: { reason: 'cursor-ahead', lastSeq: 3, cursorSeq: 9 },
    });
    assert.equal(err.status, 409);
  });

  it('has a stack', () => {
    assert.equal(typeof new ContinuityError('internal-error').stack, 'string');
  });

  it('the brand is on the prototype, not an own enumerable property', () => {
    const err = new ContinuityError('internal-error');
    assert.equal(Object.prototype.hasOwnProperty.call(err, BRAND), false);
    assert.equal((err as unknown as Record<symbol, unknown>)[BRAND], true);
    assert.deepEqual(Object.getOwnPropertySymbols(err), []);
  });

  it('instanceof matches an error from a simulated second module copy', () => {
    const foreign = foreignError('replay-window-exceeded');
    assert.equal(foreign instanceof ContinuityError, true);
    assert.equal(isContinuityError(foreign), true);
    assert.equal(isContinuityError(foreign, 'replay-window-exceeded'), true);
    assert.equal(isContinuityError(foreign, 'cursor-invalid'), false);
  });

  it('instanceof matches an object whose prototype chain carries the brand', () => {
    const proto = Object.create(null, { [BRAND]: { value: true } }) as object;
    const obj = Object.create(proto) as object;
    assert.equal(obj instanceof ContinuityError, true);
  });

  it('instanceof rejects look-alikes', () => {
    const lookalikes: unknown[] = [
      null,
      undefined,
      0,
      'cursor-invalid',
      Symbol.for('mcp-continuity.error'),
      {},
      new Error('x'),
      { code: 'cursor-invalid', status: 400, name: 'ContinuityError' },
      { [BRAND]: 'true' },
      { [BRAND]: 1 },
      { [Symbol('mcp-continuity.error')]: true },
      JSON.parse(JSON.stringify(new ContinuityError('cursor-invalid'))),
      Object.create(Error.prototype),
    ];
    for (const v of lookalikes) {
      assert.equal(v instanceof ContinuityError, false, String(typeof v === 'symbol' ? 'symbol' : JSON.stringify(v)));
      assert.equal(isContinuityError(v), false);
    }
  });

  it('subclasses keep ordinary prototype checks', () => {
    class SubError extends ContinuityError {}
    class OtherSub extends ContinuityError {}
    const sub = new SubError('store-conflict');
    assert.equal(sub instanceof SubError, true);
    assert.equal(sub instanceof ContinuityError, true);
    assert.equal(sub instanceof OtherSub, false);
    assert.equal(new ContinuityError('store-conflict') instanceof SubError, false);
    assert.equal(foreignError('store-conflict') instanceof SubError, false);
    assert.equal(sub.code, 'store-conflict');
    assert.equal(sub.status, 500);
  });
});

describe('errors: isErrorCode', () => {
  it('rejects non-codes, including inherited Object keys', () => {
    for (const v of [
      '',
      'Cursor-Invalid',
      'cursor_invalid',
      'toString',
      'constructor',
      '__proto__',
      'hasOwnProperty',
      ' cursor-invalid',
      1,
      null,
      undefined,
      {},
      ['cursor-invalid'],
    ]) {
      assert.equal(isErrorCode(v), false, String(v));
    }
  });
});

describe('errors: wire data', () => {
  it('a detail cannot overwrite the reason on the wire', () => {
    const err = new ContinuityError('gap', undefined, { reason: 'forged', extra: 1 });
    assert.equal(err.toJsonRpcError().data.reason, 'gap', 'reason is the code');
    assert.equal(err.toJsonRpcError().data.extra, 1, 'other detail is kept');
  });
});
