/**
 * An MCP server on Express, with resumable sessions. The MCP route goes before
 * `express.json()` (a parsed body also works, but escapes the endpoint's body bounds).
 * The WebSocket upgrade goes on Express's own server.
 *
 *   npm run build && PORT=3000 node --import tsx examples/express.ts
 */
import express from 'express';
import * as z from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createEndpoint, loopbackGuard } from 'mcp-continuity/server';
import { mcpExpress } from 'mcp-continuity/express';
import { upgradeHandler } from 'mcp-continuity/node';

const port = Number(process.env.PORT ?? 3000);

function buildServer(): McpServer {
  const server = new McpServer({ name: 'express-example', version: '1.0.0' });
  server.registerTool('count', { description: 'Counts to n, with progress', inputSchema: { n: z.number().int().min(1).max(1000) } }, async ({ n }, extra) => {
    const token = extra._meta?.progressToken;
    for (let i = 1; i <= n && token !== undefined; i++) {
      await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: n } });
    }
    return { content: [{ type: 'text', text: `counted to ${n}` }] };
  });
  return server;
}

const endpoint = createEndpoint({
  server: () => buildServer(),
  upgrade: { websocket: true },
  // Bound to loopback: accept only loopback Host/Origin (DNS rebinding).
  hostGuard: loopbackGuard(port),
});

const app = express();
// The MCP route first, without express.json(): the endpoint reads the body itself, so the
// process-wide bound on bodies being received (limits.maxBodyBytesTotal) holds. A parser
// in front would buffer every body, however many arrive at once.
app.all('/mcp', mcpExpress(endpoint));
// The app's other routes keep their parsers.
app.use(express.json({ limit: '4mb' }));

const server = app.listen(port, '127.0.0.1', () => console.log(`MCP endpoint at http://127.0.0.1:${port}/mcp`));
server.on('upgrade', upgradeHandler(endpoint, { path: '/mcp' }));

process.once('SIGTERM', () => {
  // The endpoint ends every stream first; then no connection has anything left to send.
  void endpoint.close().then(() => {
    server.close();
    server.closeAllConnections();
  });
});
