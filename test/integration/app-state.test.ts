/**
 * The application-state seam: a server factory saves its own per-session state with the
 * session (fenced like the record) and gets it back when the session is rebuilt; a server
 * that declares its sessions cannot be rebuilt gets them refused after a restart (404
 * `session-not-rebuildable`), and our client re-initializes: never a silent continuation.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ContinuityClientTransport, type DivergenceReport } from '../../src/client/index.js';
import type { SessionContext } from '../../src/server/index.js';
import { createExampleServer } from '../../src/example/index.js';
import { sqliteStore } from '../../src/store/sqlite/index.js';
import type { Store } from '../../src/store/types.js';
import { startFixture, type Fixture } from '../helpers/fixture.js';
import { startRoundRobin } from '../helpers/round-robin.js';
import { initialize, rpc, send, sessionHeaders } from '../helpers/sse-client.js';
import { tempFiles } from '../helpers/temp-files.js';

const files = tempFiles('mcpc-app-state-');

/** A server whose `count` tool keeps a per-session counter, saved with the session. */
function countingServer(context: SessionContext): McpServer {
  let n = context.state === undefined ? 0 : (JSON.parse(context.state) as { n: number }).n;
  const server = new McpServer({ name: 'counting', version: '1.0.0' });
  server.registerTool('count', { description: 'Adds one to the session counter.' }, async () => {
    n++;
    await context.saveState(JSON.stringify({ n }));
    return { content: [{ type: 'text', text: String(n) }] };
  });
  return server;
}

async function restartable(options: Parameters<typeof startFixture>[0]) {
  const path = files.path('app');
  let store: Store = sqliteStore({ path });
  let f: Fixture = await startFixture({ ...options, store, keepAliveMs: 0 });
  const front = await startRoundRobin([f.url]);
  return {
    front,
    get f() {
      return f;
    },
    async restart() {
      await f.close();
      await store.close();
      store = sqliteStore({ path });
      f = await startFixture({ ...options, store, keepAliveMs: 0 });
      front.setUpstreams([f.url]);
    },
    async close() {
      await front.close();
      await f.close();
      await store.close();
    },
  };
}

describe('application state', () => {
  it('is saved with the session and restored into the rebuilt server', async (t) => {
    const s = await restartable({ server: countingServer });
    t.after(() => s.close());
    const client = new Client({ name: 'app-state', version: '1.0.0' });
    await client.connect(new ContinuityClientTransport(s.front.url, { standaloneStream: false }));
    t.after(() => client.close());
    const count = async () => ((await client.callTool({ name: 'count', arguments: {} })).content as Array<{ text: string }>)[0]?.text;
    assert.equal(await count(), '1');
    assert.equal(await count(), '2');
    await s.restart();
    assert.equal(await count(), '3', 'the rebuilt server has its state back');
  });

  it('a session whose state exceeds maxSessionStateBytes is refused the save, nothing stored', async (t) => {
    let saved: Promise<void> | undefined;
    const f = await startFixture({
      limits: { maxSessionStateBytes: 64 },
      server: (context) => {
        saved = context.saveState('x'.repeat(100));
        saved.catch(() => {});
        return createExampleServer();
      },
    });
    t.after(() => f.close());
    await initialize(f.url);
    await assert.rejects(saved as Promise<void>, { code: 'session-state-limit' });
  });
});

describe('sessions declared unrebuildable', () => {
  it('are refused after a restart with 404 session-not-rebuildable, and our client re-initializes', async (t) => {
    const s = await restartable({ rebuildable: false });
    t.after(() => s.close());
    const reports: DivergenceReport[] = [];
    const client = new Client({ name: 'unrebuildable', version: '1.0.0' });
    const transport = new ContinuityClientTransport(s.front.url, { standaloneStream: false, onDivergence: (r) => reports.push(r) });
    await client.connect(transport);
    t.after(() => client.close());
    const raw = await initialize(s.front.url);
    const first = transport.sessionId;
    await client.setLoggingLevel('error');
    await s.restart();

    // A raw client sees the refusal and its reason.
    const refused = await send(s.front.url, { body: rpc('tools/list'), headers: sessionHeaders(raw) });
    assert.equal(refused.status, 404, refused.text);
    assert.equal((refused.json() as { error: { data: { reason: string } } }).error.data.reason, 'session-not-rebuildable');
    const again = await send(s.front.url, { body: rpc('tools/list'), headers: sessionHeaders(raw) });
    assert.equal(again.status, 404, 'and it stays gone');

    // Our client: the POST ran nowhere, so the transport re-initializes, tells the
    // application why (the session's state is gone), and sends it on the new session.
    const done = await client.callTool({ name: 'emit', arguments: { count: 1 } });
    assert.deepEqual(done.structuredContent, { emitted: 1 });
    assert.equal(reports.length, 1, 'one report, not silent');
    assert.equal(reports[0]?.code, 'session-not-rebuildable', 'the application is told why');
    assert.notEqual(transport.sessionId, first, 'a new session');
    const next = await client.callTool({ name: 'emit', arguments: { count: 2 } });
    assert.deepEqual(next.structuredContent, { emitted: 2 });
  });

  it('are never passivated', async (t) => {
    const store = sqliteStore({ path: files.path('no-passivation') });
    const f = await startFixture({ store, rebuildable: false, limits: { passivateAfterMs: 20 }, keepAliveMs: 0 });
    t.after(async () => {
      await f.close();
      await store.close();
    });
    const h = await initialize(f.url);
    // Several sweeps (every 10 ms) later, the session is still held and answers.
    const done = await send(f.url, { body: rpc('tools/call', { name: 'emit', arguments: { count: 20, intervalMs: 10 } }), headers: sessionHeaders(h) });
    assert.equal(done.status, 200);
    const after = await send(f.url, { body: rpc('tools/list'), headers: sessionHeaders(h) });
    assert.equal(after.status, 200, after.text);
    assert.equal(f.endpoint.sessionCount, 1);
  });
});
