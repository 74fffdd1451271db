/**
 * A real endpoint (memory store) whose `count` tool notes each call by its `run` and `tag`
 * arguments, so that many clients can share it and each count what ran for it.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { createEndpoint } from '../../src/server/index.js';
import { listen } from '../../src/node/index.js';
import { memoryStore } from '../../src/store/memory/index.js';

export interface CountingEndpoint {
  readonly url: URL;
  /** How many times `count` ran with these arguments. */
  ran(run: number, tag: string): number;
  close(): Promise<void>;
}

export async function startCountingEndpoint(): Promise<CountingEndpoint> {
  const runs = new Map<string, number>();
  const server = (): McpServer => {
    const mcp = new McpServer({ name: 'counting', version: '1.0.0' });
    mcp.registerTool('count', { description: 'Counts its calls.', inputSchema: { run: z.number().int(), tag: z.string() } }, ({ run, tag }) => {
      const key = `${run}:${tag}`;
      runs.set(key, (runs.get(key) ?? 0) + 1);
      return { content: [{ type: 'text', text: String(runs.get(key)) }] };
    });
    return mcp;
  };
  const store = memoryStore();
  const endpoint = createEndpoint({ server, store, keepAliveMs: 0 });
  const listener = await listen(endpoint, { port: 0 });
  return {
    url: listener.url,
    ran: (run, tag) => runs.get(`${run}:${tag}`) ?? 0,
    async close() {
      await listener.close();
      await store.close();
    },
  };
}
