/**
 * The endpoint on the SQLite store: a cursor trimmed by retention is refused with 410
 * replay-window-exceeded and our client re-initializes; two sessions writing 10,000
 * events each at the same time replay exactly.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ContinuityClientTransport, type DivergenceReport } from '../../src/client/index.js';
import { startChaosProxy } from '../../src/chaos/proxy.js';
import { sqliteStore } from '../../src/store/sqlite/index.js';
import type { RetentionOptions } from '../../src/store/types.js';
import { startFixture, type Fixture } from '../helpers/fixture.js';
import { initialize, rpc, send, sessionHeaders } from '../helpers/sse-client.js';
import { waitFor } from '../helpers/wait.js';

async function sqliteFixture(retention: RetentionOptions): Promise<{ f: Fixture; cleanup: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-sqlite-endpoint-'));
  const store = sqliteStore({ path: join(dir, 'endpoint.db'), retention });
  const f = await startFixture({ store, retryMs: 10, keepAliveMs: 0, hostGuard: false });
  return {
    f,
    cleanup: async () => {
      await f.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

test('a trimmed cursor gets 410 replay-window-exceeded and the client re-initializes', async () => {
  const { f, cleanup } = await sqliteFixture({ maxEvents: 50 });
  f.listener.server.on('request', (_req, res) => {
    res.shouldKeepAlive = false;
  });
  // Cut the emit stream early; by the time the client resumes, retention has trimmed its cursor.
  const proxy = await startChaosProxy({
    upstream: { host: '127.0.0.1', port: f.listener.port },
    plan: () => ({ after: '"notifications/message"', cutAfterBytes: 1500, mode: 'fin' }),
  });
  const reports: DivergenceReport[] = [];
  const transport = new ContinuityClientTransport(new URL(`http://127.0.0.1:${proxy.port}/mcp`), {
    reconnect: { initialDelayMs: 50, maxDelayMs: 100 },
    onDivergence: (r) => reports.push(r),
  });
  const client = new Client({ name: 'trim', version: '1.0.0' });
  try {
    await client.connect(transport);
    const first = transport.sessionId;
    await assert.rejects(client.callTool({ name: 'emit', arguments: { count: 500 } }), (error: { data?: { reason?: string } }) => {
      assert.equal(error.data?.reason, 'replay-window-exceeded', JSON.stringify(error));
      return true;
    });
    await waitFor(() => reports.length > 0, 'the divergence report');
    assert.equal(reports[0]?.code, 'replay-window-exceeded', 'the application is told why');
    assert.notEqual(transport.sessionId, first, 're-initialized: a new session');
    proxy.setPlan(() => ({}));
    const again = await client.callTool({ name: 'emit', arguments: { count: 5 } });
    assert.deepEqual(again.structuredContent, { emitted: 5 }, 'the new session works');
  } finally {
    await client.close();
    await proxy.close();
    await cleanup();
  }
});

test('two sessions writing 10,000 events each at once replay exactly', { timeout: 60_000 }, async () => {
  const { f, cleanup } = await sqliteFixture({ maxEvents: 20_000 });
  try {
    const [a, b] = await Promise.all([initialize(f.url), initialize(f.url)]);
    const call = (h: typeof a) =>
      send(f.url, { body: rpc('tools/call', { name: 'emit', arguments: { count: 10_000 } }), headers: sessionHeaders(h), timeoutMs: 50_000 });
    const [liveA, liveB] = await Promise.all([call(a), call(b)]);
    for (const [h, live] of [
      [a, liveA],
      [b, liveB],
    ] as const) {
      assert.equal(live.events.length, 10_002, 'priming, 10,000 notifications and the result');
      // Replay everything after the priming event and compare with what was sent live.
      const replay = await send(f.url, { headers: sessionHeaders(h, { 'last-event-id': live.events[0]?.id as string }), timeoutMs: 50_000 });
      assert.equal(replay.status, 200);
      assert.deepEqual(
        replay.events.map((e) => [e.id, e.data]),
        live.events.slice(1).map((e) => [e.id, e.data]),
        'replay equals the live stream',
      );
    }
  } finally {
    await cleanup();
  }
});
