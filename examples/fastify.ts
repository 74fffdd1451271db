/**
 * An MCP server on Fastify, with resumable sessions. Fastify parses the JSON bodies; the
 * plugin streams its replies; `app.close()` closes the endpoint and every stream.
 *
 *   npm run build && PORT=3000 node --import tsx examples/fastify.ts
 */
import Fastify from 'fastify';
import * as z from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createEndpoint, loopbackGuard } from 'mcp-continuity/server';
import { mcpFastify } from 'mcp-continuity/fastify';
import { upgradeHandler } from 'mcp-continuity/node';

const port = Number(process.env.PORT ?? 3000);

function buildServer(): McpServer {
  const server = new McpServer({ name: 'fastify-example', version: '1.0.0' });
  server.registerTool('count', { description: 'Counts to n, with progress', inputSchema: { n: z.number().int().min(1).max(1000) } }, async ({ n }, extra) => {
    const token = extra._meta?.progressToken;
    for (let i = 1; i <= n && token !== undefined; i++) {
      await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: n } });
    }
    return { content: [{ type: 'text', text: `counted to ${n}` }] };
  });
  return server;
}

const endpoint = createEndpoint({ server: () => buildServer(), upgrade: { websocket: true }, hostGuard: loopbackGuard(port) });

// forceCloseConnections: on close, after the plugin has ended every stream, also drop
// connections that never sent a request (Fastify would otherwise wait for them).
const app = Fastify({ bodyLimit: 4 * 1024 * 1024, forceCloseConnections: true });
await app.register(mcpFastify(endpoint, { path: '/mcp' }));
await app.listen({ port, host: '127.0.0.1' });
app.server.on('upgrade', upgradeHandler(endpoint, { path: '/mcp' }));
console.log(`MCP endpoint at http://127.0.0.1:${port}/mcp`);

process.once('SIGTERM', () => {
  void app.close();
});
