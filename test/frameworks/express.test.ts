/**
 * Express: the endpoint behind `express.json()` and without it; bearer auth the SDK's way
 * binds sessions to principals and reaches the tools as `authInfo`; the WebSocket upgrade
 * on Express's server.
 */
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import express from 'express';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { ContinuityClientTransport } from '../../src/client/index.js';
import { createExampleServer } from '../../src/example/index.js';
import { mcpExpress } from '../../src/frameworks/express.js';
import { upgradeHandler } from '../../src/node/websocket.js';
import { createEndpoint, type Endpoint } from '../../src/server/index.js';
import { waitFor, within } from '../helpers/wait.js';
import { acceptanceRun } from './acceptance.js';

async function listenApp(app: express.Express): Promise<{ server: Server; port: number }> {
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return { server, port: (server.address() as AddressInfo).port };
}

async function stop(endpoint: Endpoint, server: Server): Promise<void> {
  await endpoint.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

describe('Express', () => {
  const cleanup: Array<() => Promise<void>> = [];
  after(async () => {
    for (const c of cleanup) await c();
  });

  for (const parsed of [true, false]) {
    it(`${parsed ? 'with' : 'without'} express.json(): initialize, tools/list, progress, resume after a cut`, { timeout: 60_000 }, async () => {
      const errors: Error[] = [];
      const endpoint = createEndpoint({ server: () => createExampleServer(), retryMs: 10, onError: (e) => errors.push(e) });
      const app = express();
      if (parsed) app.use(express.json());
      app.all('/mcp', mcpExpress(endpoint));
      const { server, port } = await listenApp(app);
      cleanup.push(() => stop(endpoint, server));
      const { cuts } = await acceptanceRun(port);
      assert.ok(cuts >= 1);
      assert.deepEqual(errors, []);
    });
  }

  it('bearer auth (requireBearerAuth, req.auth): session bound to the principal, 404 for another, authInfo reaches the tool', { timeout: 30_000 }, async () => {
    const endpoint = createEndpoint({
      server: () => {
        const server = new McpServer({ name: 'whoami', version: '1.0.0' });
        server.registerTool('whoami', { description: 'The caller as the tool sees it' }, (extra) => ({
          content: [{ type: 'text', text: JSON.stringify({ clientId: extra.authInfo?.clientId ?? null, scopes: extra.authInfo?.scopes ?? null }) }],
        }));
        return server;
      },
    });
    const expiresAt = Math.floor(Date.now() / 1000) + 3600;
    const verifier = {
      verifyAccessToken: async (token: string) => {
        // u1/u2: two users of one OAuth client, told apart by the subject the verifier reports.
        if (token === 'u1-token' || token === 'u2-token') return { token, clientId: 'app', scopes: ['mcp'], expiresAt, extra: { sub: token.slice(0, 2) } };
        if (token !== 'alice-token' && token !== 'bob-token') throw new Error('unknown token');
        return { token, clientId: token.replace('-token', ''), scopes: ['mcp'], expiresAt };
      },
    };
    const app = express();
    app.use(express.json());
    app.all('/mcp', requireBearerAuth({ verifier }), mcpExpress(endpoint));
    const { server, port } = await listenApp(app);
    cleanup.push(() => stop(endpoint, server));
    const url = new URL(`http://127.0.0.1:${port}/mcp`);

    const client = new Client({ name: 'alice', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: 'Bearer alice-token' } } });
    await client.connect(transport);
    try {
      const sessionId = transport.sessionId as string;
      const result = await client.callTool({ name: 'whoami', arguments: {} });
      const text = (result.content as Array<{ text: string }>)[0]?.text ?? '';
      assert.deepEqual(JSON.parse(text), { clientId: 'alice', scopes: ['mcp'] }, 'the tool sees authInfo');

      const post = (token: string, id: string): Promise<Response> =>
        fetch(url, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-session-id': id,
            'mcp-protocol-version': '2025-11-25',
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' }),
        });
      const foreign = await post('bob-token', sessionId);
      const unknown = await post('bob-token', 'x'.repeat(32));
      assert.equal(foreign.status, 404, 'bob presenting alice’s session: 404');
      assert.equal(unknown.status, 404);
      assert.deepEqual(await foreign.json(), await unknown.json(), 'the same answer as an unknown session');
      const own = await post('alice-token', sessionId);
      assert.equal(own.status, 200, 'alice still reaches her session');
      await own.body?.cancel();
      // One client, two subjects: still two principals.
      const u1 = new Client({ name: 'u1', version: '1.0.0' });
      const u1Transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: 'Bearer u1-token' } } });
      await u1.connect(u1Transport);
      const u2Foreign = await post('u2-token', u1Transport.sessionId as string);
      assert.equal(u2Foreign.status, 404, 'another subject of the same client: 404');
      await u2Foreign.body?.cancel();
      await u1.close();
      const anonymous = await fetch(url, { method: 'POST', headers: { 'mcp-session-id': sessionId }, body: '{}' });
      assert.equal(anonymous.status, 401, 'no token: refused by the auth middleware');
      await anonymous.body?.cancel();
    } finally {
      await client.close();
    }
  });

  it('the WebSocket upgrade on the server Express created', { timeout: 30_000 }, async () => {
    const endpoint = createEndpoint({ server: () => createExampleServer(), upgrade: { websocket: true }, keepAliveMs: 0 });
    const app = express();
    app.use(express.json());
    app.all('/mcp', mcpExpress(endpoint));
    const { server, port } = await listenApp(app);
    server.on('upgrade', upgradeHandler(endpoint, { path: '/mcp' }));
    cleanup.push(() => stop(endpoint, server));

    const transport = new ContinuityClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), { upgrade: { websocket: true } });
    const client = new Client({ name: 'ws-under-express', version: '1.0.0' });
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
