import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { createEndpoint } from 'mcp-continuity/server';
import { listen } from 'mcp-continuity/node';
import { sqliteStore } from 'mcp-continuity/stores/sqlite';
import * as z from 'zod';

// Sessions and their event logs survive a restart (default: memory).
const store = sqliteStore({ path: process.env.DB ?? './my-server.db' });
const endpoint = createEndpoint({
  // A fresh official-SDK server per session: v1 (@modelcontextprotocol/sdk) or v2 (@modelcontextprotocol/server).
  server: () => {
    const server = new McpServer({ name: 'my-server', version: '1.0.0' });
    server.registerTool('add', { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() } }, ({ a, b }) => ({
      content: [{ type: 'text', text: String(a + b) }],
    }));
    return server;
  },
  store,
});
const listener = await listen(endpoint, { port: Number(process.env.PORT ?? 3000) });
console.log(`listening on ${listener.url.href}`); // http://127.0.0.1:3000/mcp

// Ctrl-C: stop accepting, end the streams (sessions stay in the store), then close the store.
const stop = async (): Promise<void> => {
  await listener.close();
  await store.close();
};
process.once('SIGINT', () => void stop());
process.once('SIGTERM', () => void stop());
