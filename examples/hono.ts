/**
 * An MCP server on Hono. The endpoint speaks `Request`/`Response`, so no adapter is
 * needed: hand it `c.req.raw`. Runs the same on any runtime Hono runs on, with the
 * memory store (SQLite and the WebSocket upgrade need Node).
 *
 *   npm run build && PORT=3000 node --import tsx examples/hono.ts
 */
import { Hono } from 'hono';
import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import * as z from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createEndpoint, loopbackGuard } from 'mcp-continuity/server';

const port = Number(process.env.PORT ?? 3000);

function buildServer(): McpServer {
  const server = new McpServer({ name: 'hono-example', version: '1.0.0' });
  server.registerTool('count', { description: 'Counts to n, with progress', inputSchema: { n: z.number().int().min(1).max(1000) } }, async ({ n }, extra) => {
    const token = extra._meta?.progressToken;
    for (let i = 1; i <= n && token !== undefined; i++) {
      await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: n } });
    }
    return { content: [{ type: 'text', text: `counted to ${n}` }] };
  });
  return server;
}

const endpoint = createEndpoint({ server: () => buildServer(), hostGuard: loopbackGuard(port) });

const app = new Hono();
app.all('/mcp', (c) => endpoint.handle(c.req.raw));

// serve() makes a node:http server unless told to make an HTTP/2 one.
const server = serve({ fetch: app.fetch, port, hostname: '127.0.0.1' }, () => console.log(`MCP endpoint at http://127.0.0.1:${port}/mcp`)) as Server;

process.once('SIGTERM', () => {
  // The endpoint ends every stream first; then no connection has anything left to send.
  void endpoint.close().then(() => {
    server.close();
    server.closeAllConnections();
  });
});
