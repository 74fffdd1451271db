/**
 * Refusals of a POST carrying one request echo its id (JSON-RPC allows a null id only when
 * the id could not be read); batches and unreadable bodies keep null.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startFixture, type Fixture } from '../helpers/fixture.js';
import { rpc, send } from '../helpers/sse-client.js';

describe('refusals echo the request id', () => {
  let f: Fixture;
  before(async () => {
    f = await startFixture();
  });
  after(() => f.close());

  it('404 on an unknown session and 400 session-required carry the id; a notification, a batch and bad JSON carry null', async () => {
    const unknown = await send(f.url, { body: rpc('tools/list', {}, 41), headers: { 'mcp-session-id': 'no-such-session-0123456789' } });
    assert.equal(unknown.status, 404);
    assert.equal((unknown.json() as { id: unknown }).id, 41);
    const missing = await send(f.url, { body: { jsonrpc: '2.0', id: 'a-string', method: 'tools/list' } });
    assert.equal(missing.status, 400);
    assert.equal((missing.json() as { id: unknown }).id, 'a-string');
    const notification = await send(f.url, { body: { jsonrpc: '2.0', method: 'notifications/initialized' } });
    assert.equal((notification.json() as { id: unknown }).id, null);
    const batch = await send(f.url, { body: [rpc('tools/list', {}, 7)], headers: { 'mcp-session-id': 'no-such-session-0123456789' } });
    assert.equal((batch.json() as { id: unknown }).id, null);
    const broken = await send(f.url, { body: '{"jsonrpc":"2.0","id":5,' });
    assert.equal(broken.status, 400);
    assert.equal((broken.json() as { id: unknown }).id, null);
  });
});
