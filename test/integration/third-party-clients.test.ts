/**
 * Third-party MCP clients from npm against our endpoint, over real sockets:
 * - Vercel AI SDK's `@ai-sdk/mcp` (its own Streamable HTTP transport, not the official SDK's)
 *   on the memory and SQLite stores, against a session the server ended, and across a
 *   response stream reset mid-call;
 * - `mcp-remote` (a stdio ↔ Streamable HTTP proxy), spawned as a child process and driven
 *   by the official SDK's stdio client.
 * Why: these clients read the spec independently (ai-sdk probes `server/discover` first,
 * rejects notifications, never resumes a POST stream; mcp-remote probes OAuth first), and
 * our endpoint must serve each of them exact results with nothing reported to `onError`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createMCPClient, type MCPClient } from '@ai-sdk/mcp';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { startHttpChaosProxy } from '../../src/chaos/proxy.js';
import { memoryStore } from '../../src/store/memory/index.js';
import { sqliteStore } from '../../src/store/sqlite/index.js';
import type { Store } from '../../src/store/types.js';
import { startFixture } from '../helpers/fixture.js';
import { tempFiles } from '../helpers/temp-files.js';
import { waitFor, within } from '../helpers/wait.js';

const files = tempFiles('mcp-third-party-');
const SIMPLE_TEXT = { content: [{ type: 'text', text: 'This is a simple text response for testing.' }], isError: false };
const emitted = (n: number) => ({ content: [{ type: 'text', text: `emitted ${n}` }], structuredContent: { emitted: n }, isError: false });

/**
 * What ai-sdk 2.0.x reports through `onUncaughtError` while working normally, by kind.
 * Anything else (a response for an unknown id, a malformed event, ...) is `other:` and fails.
 */
function kind(error: unknown): string {
  const cause = (error as { cause?: { text?: unknown } }).cause;
  const text = `${String(error)} (cause: ${String(cause)})`;
  // Every server notification: its transport passes only requests and responses on.
  if (text.includes('Unsupported message type')) return 'notification';
  // The priming event of each stream (an id, empty data) is parsed as JSON and fails.
  if (text.includes('Failed to parse message') && cause?.text === '') return 'priming';
  // It opens the GET stream before it has a session id: 400 session-required.
  if (text.includes('GET SSE failed: 400')) return 'get-before-session';
  // Its GET after the session ended (a reconnection racing the test's close): 404.
  if (text.includes('GET SSE failed: 404')) return 'get-after-session';
  // A stream cut under it: the response the chaos proxy resets. (Its own second GET, which
  // it races at connect, takes the first over; that one is caught up, so it ends normally.)
  if (text.includes('terminated')) return 'stream-cut';
  return `other: ${text}`;
}

interface AiSdk {
  client: MCPClient;
  sessionId(): string | undefined;
  uncaught: unknown[];
}

async function aiSdk(url: URL): Promise<AiSdk> {
  let sessionId: string | undefined;
  const uncaught: unknown[] = [];
  const client = await within(
    createMCPClient({
      transport: { type: 'http', url: url.href, onSessionIdChange: (id) => (sessionId = id) },
      onUncaughtError: (error) => uncaught.push(error),
    }),
    'ai-sdk createMCPClient',
  );
  return { client, sessionId: () => sessionId, uncaught };
}

const unexpected = (c: AiSdk) => c.uncaught.map(kind).filter((k) => k.startsWith('other'));

for (const [name, makeStore] of [
  ['memory', () => memoryStore()],
  ['SQLite', () => sqliteStore({ path: files.path('ai-sdk') })],
] as const) {
  test(`@ai-sdk/mcp on the ${name} store: connect, list tools, call tools, exact results`, async () => {
    const store: Store = makeStore();
    const f = await startFixture({ store });
    let c: AiSdk | undefined;
    try {
      c = await aiSdk(f.url);
      assert.deepEqual(c.client.serverInfo, { name: 'mcp-continuity-example', version: '1.0.0' });
      // No `server/discover` here (400 session-required): it falls back to initialize.
      assert.equal(c.client.initializeResult.protocolVersion, '2025-11-25');
      assert.ok(c.sessionId(), 'a session id was assigned');
      const { tools } = await within(c.client.listTools(), 'tools/list');
      for (const tool of ['emit', 'test_simple_text'])
        assert.ok(
          tools.some((t) => t.name === tool),
          `${tool} listed`,
        );

      assert.deepEqual(await within(c.client.callTool({ name: 'test_simple_text' }), 'test_simple_text'), SIMPLE_TEXT);

      // emit streams 25 log notifications on the call's stream before its result. ai-sdk has
      // no notification handler: each reaches onUncaughtError, which is how we count them.
      const cuts = c.uncaught.filter((e) => kind(e) === 'stream-cut');
      c.uncaught.length = 0;
      const result = await within(c.client.callTool({ name: 'emit', arguments: { count: 25 } }), 'emit');
      assert.deepEqual(result, emitted(25));
      assert.equal(c.uncaught.filter((e) => kind(e) === 'notification').length, 25, 'all 25 log notifications arrived before the result');
      assert.deepEqual(unexpected(c), []);
      assert.deepEqual([...cuts, ...c.uncaught.filter((e) => kind(e) === 'stream-cut')], [], 'no stream was cut under it');

      const id = c.sessionId() as string;
      await within(c.client.close(), 'ai-sdk close');
      assert.equal(await f.endpoint.store.sessions.get(id), undefined, 'close() sent DELETE: the session is gone');
    } finally {
      await c?.client.close(); // a no-op once closed
      await f.close();
      await store.close();
    }
    assert.deepEqual(f.errors, []);
  });
}

test('@ai-sdk/mcp on a session the server ended: a clear session-not-found error, no crash, a new client works', async () => {
  const f = await startFixture();
  let c: AiSdk | undefined;
  let fresh: AiSdk | undefined;
  try {
    c = await aiSdk(f.url);
    const id = c.sessionId();
    assert.ok(id);
    // End the session from outside, as an expiry or another client's DELETE would.
    const deleted = await fetch(f.url, { method: 'DELETE', headers: { 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' } });
    assert.equal(deleted.status, 200);

    // What ai-sdk does: our 404 carries a JSON-RPC error for the request, and ai-sdk hands
    // that body to the caller before looking at the status, so its own 404 handling
    // (clear the id, onSessionExpired) never runs. It does not re-initialize: the call
    // fails with our error, the client keeps the dead id, and the application must
    // create a new client.
    await assert.rejects(
      within(c.client.callTool({ name: 'test_simple_text' }), 'call on the ended session'),
      (error: { code?: number; data?: { reason?: string } }) => {
        assert.equal(error.code, -32001, String(error));
        assert.equal(error.data?.reason, 'session-not-found');
        return true;
      },
    );
    assert.equal(c.sessionId(), id, 'ai-sdk kept the dead session id');

    fresh = await aiSdk(f.url);
    assert.notEqual(fresh.sessionId(), id, 'a new session, never the old id resurrected');
    assert.deepEqual(await within(fresh.client.callTool({ name: 'test_simple_text' }), 'call on the new session'), SIMPLE_TEXT);
    assert.deepEqual([...unexpected(c), ...unexpected(fresh)], []);
  } finally {
    await c?.client.close();
    await fresh?.client.close();
    await f.close();
  }
  assert.deepEqual(f.errors, []);
});

test('@ai-sdk/mcp with its response stream reset mid-call: an error, never a hang or a wrong result; the session lives on', async () => {
  const f = await startFixture();
  const proxy = await startHttpChaosProxy({ targets: [f.url] });
  let c: AiSdk | undefined;
  try {
    c = await aiSdk(new URL(f.url.pathname, proxy.url));
    // ai-sdk resumes only its GET stream, never a POST's (no Last-Event-ID there), and a
    // cut stream does not fail the call: without its own timeout the call would wait
    // forever. With one, it must fail by that timeout, with no result: the stream is reset
    // after 4 events (priming + 3 of 20 notifications), long before the result was sent.
    proxy.configure({ cutAfterEvents: 4, mode: 'rst' });
    const call = c.client.callTool({ name: 'emit', arguments: { count: 20, intervalMs: 10 }, options: { timeout: 2_000 } });
    await assert.rejects(within(call, 'the cut call'), /Request timed out after 2000ms/);
    assert.equal(proxy.faults.length, 1, 'exactly the emit response was cut');
    assert.equal(proxy.faults[0]?.events, 4);

    proxy.configure({ cutAfterEvents: undefined });
    assert.deepEqual(await within(c.client.callTool({ name: 'emit', arguments: { count: 3 } }), 'the next call'), emitted(3));
    assert.deepEqual(unexpected(c), []);
  } finally {
    await c?.client.close();
    await proxy.close();
    await f.close();
  }
  assert.deepEqual(f.errors, []);
});

test('mcp-remote (stdio ↔ HTTP proxy) driven by the SDK stdio client: tools, notifications, exact results, clean exit', async () => {
  const require = createRequire(import.meta.url);
  const manifest = require.resolve('mcp-remote/package.json');
  const bin = (require(manifest) as { bin: Record<string, string> }).bin['mcp-remote'];
  assert.ok(bin, 'mcp-remote declares its bin');
  const f = await startFixture();
  // mcp-remote first probes OAuth (a GET on the endpoint hoping for a 401, then the
  // .well-known documents, all 404 here) and goes on without auth: no flag is needed.
  // Plain http is allowed on loopback anyway; --allow-http keeps that explicit. It also
  // opens a probe session of its own and DELETEs neither session on exit (idle expiry ends them).
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(dirname(manifest), bin), f.url.href, '--transport', 'http-only', '--allow-http'],
    env: { MCP_REMOTE_CONFIG_DIR: files.dir },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const client = new Client({ name: 'via-mcp-remote', version: '1.0.0' });
  const logged: number[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    logged.push((n.params.data as { seq: number }).seq);
  });
  let child: ChildProcess | undefined;
  try {
    await within(client.connect(transport), 'connect through mcp-remote', 20_000).catch((error: Error) => {
      throw new Error(`${error.message}\nmcp-remote stderr:\n${stderr}`);
    });
    // The SDK keeps the child private; we need it to see how it exits.
    child = (transport as unknown as { _process?: ChildProcess })._process;
    assert.ok(child, 'the child process (SDK internals changed?)');
    assert.deepEqual(client.getServerVersion(), { name: 'mcp-continuity-example', version: '1.0.0' });

    const { tools } = await within(client.listTools(), 'tools/list');
    for (const tool of ['emit', 'test_simple_text'])
      assert.ok(
        tools.some((t) => t.name === tool),
        `${tool} listed`,
      );
    const simple = await within(client.callTool({ name: 'test_simple_text' }), 'test_simple_text');
    assert.deepEqual(simple, { content: SIMPLE_TEXT.content });

    const progress: number[] = [];
    const result = await within(
      client.callTool({ name: 'emit', arguments: { count: 5, intervalMs: 20 } }, undefined, { onprogress: (p) => progress.push(p.progress) }),
      'emit',
    );
    assert.deepEqual(result, { content: [{ type: 'text', text: 'emitted 5' }], structuredContent: { emitted: 5 } });
    await waitFor(
      () => logged.length >= 5,
      () => `5 log notifications, got ${JSON.stringify(logged)}`,
    );
    assert.deepEqual(logged, [1, 2, 3, 4, 5], 'log notifications relayed, all and in order');
    // mcp-remote relays all five progress notifications before the result (seen on the
    // wire), but the SDK v1 client handles a notification a microtask late and a response
    // at once: progress read from the same stdio chunk as the result finds its handler
    // already gone and is dropped. So only an in-order prefix is guaranteed here.
    // The 20 ms steps keep at least the first one in a chunk of its own.
    assert.ok(progress.length >= 1, 'progress relayed');
    assert.deepEqual(progress, [1, 2, 3, 4, 5].slice(0, progress.length), 'progress relayed in order');
  } finally {
    // Ends the child's stdin; the SDK escalates to SIGTERM after 2 s, SIGKILL after 4 s.
    await within(client.close(), 'closing the stdio client');
    await f.close();
  }
  const exited = child;
  assert.ok(exited);
  await waitFor(() => exited.exitCode !== null || exited.signalCode !== null, 'mcp-remote to exit');
  assert.equal(exited.signalCode, null, `mcp-remote exited on its own when its stdin closed, not by a signal\n${stderr}`);
  assert.equal(exited.exitCode, 0, stderr);
  assert.deepEqual(f.errors, []);
});
