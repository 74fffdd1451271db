/**
 * A store that fails while the endpoint answers requests (here a real SQLite store closed
 * under it): each request gets 503 `store-unavailable`, and `onError` hears of it, once per
 * interval, not once per request. Before, such failures left no trace but the clients' 503s.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isContinuityError } from '../../src/protocol/errors.js';
import { REQUEST_FAILURE_REPORT_MS } from '../../src/server/endpoint.js';
import { sqliteStore } from '../../src/store/sqlite/index.js';
import { startFixture } from '../helpers/fixture.js';
import { rpc, send } from '../helpers/sse-client.js';
import { tempFiles } from '../helpers/temp-files.js';
import { assertRefusal } from './refusal-assert.js';

const files = tempFiles('mcp-store-failure-');

test('requests that meet a failed store: every one a 503, onError once per interval', async () => {
  let clock = 1_000_000;
  const store = sqliteStore({ path: files.path('closed') });
  const f = await startFixture({ store, now: () => clock });
  try {
    await store.close();
    const ask = (i: number) =>
      send(f.url, { body: rpc('tools/list', {}, i), headers: { 'mcp-session-id': `unknown-session-${i}`, 'mcp-protocol-version': '2025-11-25' } });
    for (let i = 0; i < 20; i++) assertRefusal(await ask(i), 'store-unavailable', `request ${i}`);
    assert.equal(f.errors.length, 1, 'one report for 20 failed requests');
    assert.ok(isContinuityError(f.errors[0], 'store-unavailable'), String(f.errors[0]));
    clock += REQUEST_FAILURE_REPORT_MS;
    assertRefusal(await ask(20), 'store-unavailable', 'after the interval');
    assert.equal(f.errors.length, 2, 'reported again once the interval passed');
  } finally {
    await f.close();
  }
});
