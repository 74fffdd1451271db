/**
 * A SQLite file restored from a backup went back in time: the process that rebuilds the
 * session from it has no memory of the writes it lost, but our client says what it
 * received (`x-mcp-seen`), so its next request ends the session with `store-regressed`
 * and the client re-initializes, reporting why. Retention dropping completed streams is
 * not mistaken for it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, rmSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ContinuityClientTransport, type DivergenceReport } from '../../src/client/index.js';
import { startChaosProxy, type ChaosProxy } from '../../src/chaos/proxy.js';
import { sqliteStore } from '../../src/store/sqlite/index.js';
import type { EndpointOptions } from '../../src/server/index.js';
import { startFixture, type Fixture } from '../helpers/fixture.js';
import { tempFiles } from '../helpers/temp-files.js';

const files = tempFiles('mcp-sqlite-restored-');

/** The endpoint on the SQLite file at `path`, reached through `proxy` from now on; `stop` leaves its sessions in the file. */
async function serveFile(
  path: string,
  proxy: ChaosProxy | undefined,
  options: Partial<EndpointOptions> = {},
): Promise<{ f: Fixture; stop: () => Promise<void> }> {
  const store = sqliteStore({ path });
  const f = await startFixture({ store, retryMs: 10, hostGuard: false, ...options });
  // No pooled connection outlives the process it led to: a request on one would be cut before its answer.
  f.listener.server.on('request', (_req, res) => {
    res.shouldKeepAlive = false;
  });
  proxy?.setPlan(() => ({ upstream: { host: '127.0.0.1', port: f.listener.port } }));
  return {
    f,
    stop: async () => {
      await f.close();
      await store.close();
    },
  };
}

function copyDb(from: string, to: string): void {
  for (const suffix of ['-wal', '-shm']) rmSync(`${to}${suffix}`, { force: true });
  copyFileSync(from, to);
  for (const suffix of ['-wal', '-shm']) if (existsSync(`${from}${suffix}`)) copyFileSync(`${from}${suffix}`, `${to}${suffix}`);
}

async function clientOn(proxy: ChaosProxy, reports: DivergenceReport[]): Promise<{ client: Client; transport: ContinuityClientTransport }> {
  const transport = new ContinuityClientTransport(new URL(`http://127.0.0.1:${proxy.port}/mcp`), {
    reconnect: { initialDelayMs: 20, maxDelayMs: 100 },
    onDivergence: (r) => reports.push(r),
  });
  const client = new Client({ name: 'restored', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

test('a backup restored under a session: its next request ends it with store-regressed, and the client re-initializes', async () => {
  const path = files.path('live');
  const backup = files.path('backup');
  let server = await serveFile(path, undefined);
  const proxy = await startChaosProxy({ upstream: { host: '127.0.0.1', port: server.f.listener.port } });
  const reports: DivergenceReport[] = [];
  const { client, transport } = await clientOn(proxy, reports);
  try {
    const session = transport.sessionId;
    await client.callTool({ name: 'emit', arguments: { count: 2 } });
    await server.stop();
    copyDb(path, backup);
    // A whole call after the backup: the client holds its events, the backup does not.
    server = await serveFile(path, proxy);
    await client.callTool({ name: 'emit', arguments: { count: 30 } });
    assert.equal(transport.sessionId, session, 'a restart alone continues the session');
    assert.equal(reports.length, 0, 'no divergence yet');
    await server.stop();
    copyDb(backup, path);
    server = await serveFile(path, proxy);

    const after = await client.callTool({ name: 'emit', arguments: { count: 2 } });
    assert.deepEqual(after.structuredContent, { emitted: 2 }, 'the call ran, on a new session');
    assert.notEqual(transport.sessionId, session, 're-initialized');
    assert.equal(reports[0]?.code, 'store-regressed', `the application is told why: ${JSON.stringify(reports.map((r) => r.code))}`);
  } finally {
    await client.close().catch(() => {});
    await proxy.close();
    await server.stop();
  }
});

test('completed streams dropped by retention are not a store that went back', async () => {
  const path = files.path('retention');
  const limits = { limits: { maxStreamsPerSession: 2 } };
  let server = await serveFile(path, undefined, limits);
  const proxy = await startChaosProxy({ upstream: { host: '127.0.0.1', port: server.f.listener.port } });
  const reports: DivergenceReport[] = [];
  const { client, transport } = await clientOn(proxy, reports);
  try {
    const session = transport.sessionId;
    for (let i = 0; i < 6; i++) await client.callTool({ name: 'emit', arguments: { count: 3 } });
    await server.stop();
    server = await serveFile(path, proxy, limits);
    for (let i = 0; i < 3; i++) await client.callTool({ name: 'emit', arguments: { count: 3 } });
    assert.equal(transport.sessionId, session, 'the same session');
    assert.deepEqual(
      reports.map((r) => r.code),
      [],
      'no divergence',
    );
  } finally {
    await client.close().catch(() => {});
    await proxy.close();
    await server.stop();
  }
});
