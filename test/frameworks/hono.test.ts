/**
 * Hono on `@hono/node-server`, mounted with no adapter at all:
 * `app.all('/mcp', (c) => endpoint.handle(c.req.raw))`, memory store: the acceptance run.
 */
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { after, describe, it } from 'node:test';
import { Hono } from 'hono';
import { serve } from '@hono/node-server';
import { createExampleServer } from '../../src/example/index.js';
import { createEndpoint } from '../../src/server/index.js';
import { memoryStore } from '../../src/store/memory/index.js';
import { acceptanceRun } from './acceptance.js';

describe('Hono on @hono/node-server', () => {
  const cleanup: Array<() => Promise<void>> = [];
  after(async () => {
    for (const c of cleanup) await c();
  });

  it('c.req.raw straight to endpoint.handle: initialize, tools/list, progress, resume after a cut', { timeout: 60_000 }, async () => {
    const errors: Error[] = [];
    const endpoint = createEndpoint({ server: () => createExampleServer(), store: memoryStore(), retryMs: 10, onError: (e) => errors.push(e) });
    const app = new Hono();
    app.all('/mcp', (c) => endpoint.handle(c.req.raw));
    const { server, port } = await new Promise<{ server: Server; port: number }>((resolve) => {
      const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => resolve({ server: s as Server, port: info.port }));
    });
    cleanup.push(async () => {
      await endpoint.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });
    await acceptanceRun(port);
    assert.deepEqual(errors, []);
  });
});
