/**
 * Passivation on a durable store: a session with no reader and nothing in flight is dropped
 * from memory and rebuilt on its next request, through the restart path; its streams and
 * cursors continue. A session with a reader, or a call in flight, stays.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sqliteStore } from '../../src/store/sqlite/index.js';
import { startFixture, type Fixture } from '../helpers/fixture.js';
import { initialize, messages, rpc, send, sessionHeaders } from '../helpers/sse-client.js';
import { waitFor } from '../helpers/wait.js';

describe('passivation (SQLite)', () => {
  let f: Fixture;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mcpc-passivate-'));
    f = await startFixture({ store: sqliteStore({ path: join(dir, 'db.sqlite') }), limits: { passivateAfterMs: 100 }, keepAliveMs: 0 });
  });
  after(async () => {
    await f.close();
    await f.endpoint.store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('an idle session leaves memory and comes back on its next request with its log intact; one with a reader stays', async () => {
    const idle = await initialize(f.url);
    const first = await send(f.url, { body: rpc('tools/call', { name: 'emit', arguments: { count: 5 } }), headers: sessionHeaders(idle) });
    const ids = first.events.map((e) => e.id as string);
    const listening = await initialize(f.url);
    // A standalone reader keeps its session in memory.
    const reader = send(f.url, { headers: sessionHeaders(listening), timeoutMs: 60_000 });
    await waitFor(() => f.endpoint.sessionCount === 1, 'the idle session to be passivated');
    // Its next request rebuilds it: same session, a resume of an old cursor replays exactly.
    const resumed = await send(f.url, { headers: sessionHeaders(idle, { 'last-event-id': ids[1] as string }) });
    assert.equal(resumed.status, 200, resumed.text);
    assert.deepEqual(
      resumed.events.map((e) => e.id),
      ids.slice(2),
    );
    const next = await send(f.url, { body: rpc('tools/call', { name: 'emit', arguments: { count: 2 } }), headers: sessionHeaders(idle) });
    assert.equal(next.status, 200, next.text);
    assert.ok('result' in (messages(next.events).at(-1) as object));
    assert.equal(f.endpoint.sessionCount, 2);
    await send(f.url, { method: 'DELETE', headers: sessionHeaders(listening) });
    await reader;
  });

  it('resetReplayLog works on a session this process does not hold (passivated, or left by an earlier process)', async () => {
    const h = await initialize(f.url);
    const first = await send(f.url, { body: rpc('tools/call', { name: 'emit', arguments: { count: 3 } }), headers: sessionHeaders(h) });
    const cursor = first.events.at(-1)?.id as string;
    await waitFor(() => f.endpoint.sessionCount === 0, 'the session to be passivated');
    await f.endpoint.resetReplayLog(h.sessionId);
    const refused = await send(f.url, { headers: sessionHeaders(h, { 'last-event-id': cursor }) });
    assert.equal(refused.status, 409);
    assert.equal((refused.json() as { error: { data: { reason: string } } }).error.data.reason, 'replay-epoch-mismatch');
    await assert.rejects(f.endpoint.resetReplayLog('no-such-session-0123456789'), { code: 'session-not-found' });
  });
});
