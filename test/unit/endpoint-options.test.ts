import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createEndpoint } from '../../src/server/endpoint.js';
import { resolveEndpointOptions, type EndpointOptions } from '../../src/server/options.js';
import { createExampleServer } from '../../src/example/index.js';
import { ProcessState } from '../../src/server/stream/process.js';

const server = (): ReturnType<typeof createExampleServer> => createExampleServer();

/** One row per option: a wrong value, the error it must throw, and a value it must take. */
const ROWS: ReadonlyArray<{
  option: string;
  bad: Partial<Record<string, unknown>>;
  error: typeof TypeError | typeof RangeError;
  good: Partial<Record<string, unknown>>;
}> = [
  { option: 'server', bad: { server: 'nope' }, error: TypeError, good: {} },
  { option: 'rebuildable', bad: { rebuildable: 'yes' }, error: TypeError, good: { rebuildable: false } },
  { option: 'store', bad: { store: 7 }, error: TypeError, good: { store: undefined } },
  { option: 'retention', bad: { retention: 'long' }, error: TypeError, good: { retention: { maxEvents: 10 } } },
  { option: 'limits', bad: { limits: 5 }, error: TypeError, good: { limits: { maxSessions: 3 } } },
  { option: 'limits.maxSessions', bad: { limits: { maxSessions: 0 } }, error: RangeError, good: { limits: { maxSessions: undefined } } },
  { option: 'jsonResponse', bad: { jsonResponse: 1 }, error: TypeError, good: { jsonResponse: true } },
  { option: 'retryMs', bad: { retryMs: -1 }, error: RangeError, good: { retryMs: 0 } },
  { option: 'retryMs', bad: { retryMs: 1.5 }, error: RangeError, good: { retryMs: 250 } },
  { option: 'retryMs', bad: { retryMs: '1000' }, error: TypeError, good: { retryMs: undefined } },
  { option: 'keepAliveMs', bad: { keepAliveMs: -5 }, error: RangeError, good: { keepAliveMs: 0 } },
  { option: 'keepAliveMs', bad: { keepAliveMs: Number.NaN }, error: RangeError, good: { keepAliveMs: 2.5 } },
  { option: 'keepAliveMs', bad: { keepAliveMs: Infinity }, error: RangeError, good: { keepAliveMs: 15_000 } },
  { option: 'upgrade', bad: { upgrade: true }, error: TypeError, good: { upgrade: { websocket: true } } },
  { option: 'upgrade.websocket', bad: { upgrade: { websocket: 'on' } }, error: TypeError, good: { upgrade: { websocket: false } } },
  {
    option: 'upgrade.expiresInMs',
    bad: { upgrade: { websocket: true, expiresInMs: 0 } },
    error: RangeError,
    good: { upgrade: { websocket: true, expiresInMs: 1 } },
  },
  {
    option: 'upgrade.expiresInMs',
    bad: { upgrade: { websocket: true, expiresInMs: Infinity } },
    error: RangeError,
    good: { upgrade: { websocket: true, expiresInMs: 500 } },
  },
  {
    option: 'upgrade.maxPending',
    bad: { upgrade: { websocket: true, maxPending: -1 } },
    error: RangeError,
    good: { upgrade: { websocket: true, maxPending: 0 } },
  },
  {
    option: 'upgrade.maxPending',
    bad: { upgrade: { websocket: true, maxPending: 2.5 } },
    error: RangeError,
    good: { upgrade: { websocket: true, maxPending: 3 } },
  },
  { option: 'hostGuard', bad: { hostGuard: true }, error: TypeError, good: { hostGuard: false } },
  { option: 'sessionId', bad: { sessionId: 'fixed' }, error: TypeError, good: { sessionId: () => 'x'.repeat(32) } },
  { option: 'onError', bad: { onError: {} }, error: TypeError, good: { onError: () => {} } },
  { option: 'now', bad: { now: 5 }, error: TypeError, good: { now: () => 5 } },
  { option: 'cluster', bad: { cluster: 'on' }, error: TypeError, good: { cluster: {} } },
  { option: 'modern', bad: { modern: {} }, error: TypeError, good: { modern: { fetch: () => Promise.resolve(new Response()) } } },
  // A look-alike is refused: the endpoint counts in the instance's private fields.
  { option: 'process', bad: { process: { ...new ProcessState() } }, error: TypeError, good: { process: new ProcessState() } },
  { option: 'onResume', bad: { onResume: 'log' }, error: TypeError, good: { onResume: () => {} } },
  { option: 'onDrain', bad: { onDrain: 1 }, error: TypeError, good: { onDrain: () => {} } },
];

describe('createEndpoint options: each is validated before anything is built', () => {
  for (const row of ROWS) {
    it(`${row.option}: ${JSON.stringify(Object.values(row.bad)[0]) ?? String(Object.values(row.bad)[0])} → ${row.error.name}`, () => {
      const bad = { server, ...row.bad } as unknown as EndpointOptions;
      assert.throws(
        () => createEndpoint(bad),
        (error: unknown) => {
          assert.ok(error instanceof row.error, `a ${row.error.name}, got ${String(error)}`);
          assert.match(error.message, new RegExp(`\\b${row.option.replace('.', '\\.')}\\b`), 'the message names the option');
          return true;
        },
      );
      assert.doesNotThrow(() => resolveEndpointOptions({ server, ...row.good }), 'an accepted value passes');
    });
  }

  it('the defaults when nothing is given', () => {
    const resolved = resolveEndpointOptions({ server });
    assert.deepEqual(
      {
        retryMs: resolved.retryMs,
        keepAliveMs: resolved.keepAliveMs,
        upgrade: resolved.upgrade,
        jsonResponse: resolved.jsonResponse,
        rebuildable: resolved.rebuildable,
      },
      { retryMs: 1000, keepAliveMs: 15_000, upgrade: { websocket: false, expiresInMs: 10_000, maxPending: 100 }, jsonResponse: false, rebuildable: true },
    );
  });

  it('given values are kept', () => {
    const resolved = resolveEndpointOptions({ server, retryMs: 7, keepAliveMs: 0, upgrade: { websocket: true, expiresInMs: 50, maxPending: 0 } });
    assert.deepEqual([resolved.retryMs, resolved.keepAliveMs, resolved.upgrade], [7, 0, { websocket: true, expiresInMs: 50, maxPending: 0 }]);
  });

  it('a throwing onError is contained', () => {
    const resolved = resolveEndpointOptions({
      server,
      onError: () => {
        throw new Error('hook failed');
      },
    });
    assert.doesNotThrow(() => resolved.onError(new Error('x')));
  });
});
