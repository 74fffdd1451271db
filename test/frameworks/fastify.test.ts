/**
 * Fastify with its default JSON parsing: the acceptance run, Fastify-level body errors as
 * the endpoint's coded refusals, and `fastify.close()` ending every stream cleanly.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createExampleServer } from '../../src/example/index.js';
import { ContinuityClientTransport } from '../../src/client/index.js';
import { mcpFastify } from '../../src/frameworks/fastify.js';
import { upgradeHandler } from '../../src/node/websocket.js';
import { createEndpoint, type Endpoint } from '../../src/server/index.js';
import { waitFor, within } from '../helpers/wait.js';
import { acceptanceRun } from './acceptance.js';

async function start(options: Parameters<typeof createEndpoint>[0]): Promise<{ app: FastifyInstance; endpoint: Endpoint; port: number; url: URL }> {
  const endpoint = createEndpoint(options);
  // As docs/frameworks.md recommends: connections that never sent a request (a client's
  // spare pooled socket) would otherwise hold close() for Fastify's keep-alive timeout.
  const app = Fastify({ forceCloseConnections: true });
  // A route of the app's own, to show the plugin leaves its parsing alone.
  app.post('/echo', async (request) => ({ got: request.body }));
  await app.register(mcpFastify(endpoint));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as AddressInfo).port;
  return { app, endpoint, port, url: new URL(`http://127.0.0.1:${port}/mcp`) };
}

describe('Fastify', () => {
  const cleanup: Array<() => Promise<unknown>> = [];
  after(async () => {
    for (const c of cleanup) await c();
  });

  it('default JSON parsing: initialize, tools/list, progress, resume after a cut', { timeout: 60_000 }, async () => {
    const errors: Error[] = [];
    const s = await start({ server: () => createExampleServer(), retryMs: 10, onError: (e) => errors.push(e) });
    cleanup.push(() => s.app.close());
    await acceptanceRun(s.port);
    assert.deepEqual(errors, []);
  });

  it('body errors Fastify finds are the endpoint’s coded refusals; the app’s other routes parse as before', async () => {
    const s = await start({ server: () => createExampleServer() });
    cleanup.push(() => s.app.close());
    const post = (body: string, type: string): Promise<Response> =>
      fetch(s.url, { method: 'POST', headers: { 'content-type': type, accept: 'application/json, text/event-stream' }, body });
    const bad = await post('{"jsonrpc":', 'application/json');
    assert.equal(bad.status, 400);
    assert.equal(((await bad.json()) as { error: { data: { reason: string } } }).error.data.reason, 'parse-error');
    const text = await post('hello', 'text/plain');
    assert.equal(text.status, 415);
    assert.equal(((await text.json()) as { error: { data: { reason: string } } }).error.data.reason, 'unsupported-media-type');
    const echo = await fetch(new URL('/echo', s.url), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
    assert.deepEqual(await echo.json(), { got: { a: 1 } });
  });

  it('fastify.close() closes the endpoint and ends every stream cleanly', { timeout: 30_000 }, async () => {
    const s = await start({ server: () => createExampleServer(), keepAliveMs: 0 });
    const client = new Client({ name: 'close', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(s.url);
    await client.connect(transport);
    const sessionId = transport.sessionId as string;
    // A standalone stream and a call's stream, both open when the app closes.
    const standalone = await fetch(s.url, { headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' } });
    assert.equal(standalone.status, 200, 'a standalone stream (taking it over from the SDK client)');
    const call = await fetch(s.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': sessionId,
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'long', method: 'tools/call', params: { name: 'emit', arguments: { count: 1000, intervalMs: 50 } } }),
    });
    assert.equal(call.status, 200);
    const reader = (call.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    await waitFor(() => s.endpoint.sessionCount === 1, 'the session');
    await within(s.app.close(), 'fastify.close() with live streams', 10_000);
    assert.equal(s.endpoint.sessionCount, 0, 'the endpoint closed its sessions');
    // Both streams end (not reset): reads run to done without an error.
    for (const r of [reader, (standalone.body as ReadableStream<Uint8Array>).getReader()]) {
      for (;;) {
        const { done } = await within(r.read(), 'the stream to end');
        if (done) break;
      }
    }
    await client.close().catch(() => {});
  });

  it('the WebSocket upgrade on app.server', { timeout: 30_000 }, async () => {
    const s = await start({ server: () => createExampleServer(), upgrade: { websocket: true }, keepAliveMs: 0 });
    s.app.server.on('upgrade', upgradeHandler(s.endpoint, { path: '/mcp' }));
    cleanup.push(() => s.app.close());
    const transport = new ContinuityClientTransport(s.url, { upgrade: { websocket: true } });
    const client = new Client({ name: 'ws-under-fastify', version: '1.0.0' });
    await client.connect(transport);
    try {
      await waitFor(() => transport.upgraded, 'the transport to upgrade');
      const progress: number[] = [];
      const result = await within(
        client.callTool({ name: 'emit', arguments: { count: 20 } }, undefined, { onprogress: (p) => progress.push(p.progress) }),
        'emit over the socket',
      );
      assert.deepEqual(result.structuredContent, { emitted: 20 });
      assert.equal(progress.length, 20);
      assert.equal(transport.upgraded, true, 'still upgraded');
    } finally {
      await client.close();
    }
  });
});
