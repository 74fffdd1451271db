/**
 * Both eras through the framework adapters: Express (behind `express.json()`, so the body
 * arrives parsed), Fastify and Hono each serve an SDK v1 client a session and an SDK v2
 * client pinned to 2026-07-28 the modern leg, with progress, on one route.
 */
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { serve } from '@hono/node-server';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { createExampleServer } from '../../src/example/index.js';
import { createExampleHandler } from '../../src/example/modern/index.js';
import { mcpExpress } from '../../src/frameworks/express.js';
import { mcpFastify } from '../../src/frameworks/fastify.js';
import { createEndpoint, type Endpoint } from '../../src/server/index.js';

const MODERN = '2026-07-28';

async function bothEras(url: URL, endpoint: Endpoint): Promise<void> {
  const v1 = new ClientV1({ name: 'v1', version: '1.0.0' });
  const t1 = new TransportV1(url);
  await v1.connect(t1);
  const v2 = new ClientV2({ name: 'v2', version: '2.0.0' }, { versionNegotiation: { mode: { pin: MODERN } } });
  const t2 = new TransportV2(url);
  await v2.connect(t2);
  try {
    assert.ok(t1.sessionId);
    assert.equal(t2.sessionId, undefined);
    const p1: number[] = [];
    await v1.callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined, { onprogress: (p) => p1.push(p.progress) });
    const p2: number[] = [];
    await v2.callTool({ name: 'test_tool_with_progress', arguments: {} }, { onprogress: (p) => p2.push(p.progress) });
    assert.deepEqual(p1, [0, 50, 100]);
    assert.deepEqual(p2, [0, 50, 100]);
    assert.equal(endpoint.sessionCount, 1);
  } finally {
    await t1.terminateSession();
    await v1.close();
    await v2.close();
  }
}

const newEndpoint = (): Endpoint => createEndpoint({ server: () => createExampleServer(), modern: createExampleHandler() });
const closeServer = (server: Server): Promise<void> =>
  new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

describe('both eras through the framework adapters', () => {
  const cleanup: Array<() => Promise<unknown>> = [];
  after(async () => {
    for (const c of cleanup) await c();
  });

  it('Express, behind express.json()', async () => {
    const endpoint = newEndpoint();
    const app = express();
    app.use(express.json());
    app.all('/mcp', mcpExpress(endpoint));
    const server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    cleanup.push(async () => {
      await endpoint.close();
      await closeServer(server);
    });
    await bothEras(new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`), endpoint);
  });

  it('Fastify', async () => {
    const endpoint = newEndpoint();
    const app = Fastify({ forceCloseConnections: true });
    await app.register(mcpFastify(endpoint));
    await app.listen({ port: 0, host: '127.0.0.1' });
    cleanup.push(() => app.close());
    await bothEras(new URL(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/mcp`), endpoint);
  });

  it('Hono', async () => {
    const endpoint = newEndpoint();
    const app = new Hono();
    app.all('/mcp', (c) => endpoint.handle(c.req.raw));
    const { server, port } = await new Promise<{ server: Server; port: number }>((resolve) => {
      const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => resolve({ server: s as Server, port: info.port }));
    });
    cleanup.push(async () => {
      await endpoint.close();
      await closeServer(server);
    });
    await bothEras(new URL(`http://127.0.0.1:${port}/mcp`), endpoint);
  });
});
