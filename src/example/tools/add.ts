import * as z from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';

/** Registers `add`, the README's tool: the README's client snippet calls it on `serve` too. */
export function registerAddTool(server: McpServer): void {
  server.registerTool('add', { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() } }, ({ a, b }) => ({
    content: [{ type: 'text', text: String(a + b) }],
  }));
}
