/**
 * A real endpoint (memory store) whose `count` tool notes each call by its `run` and `tag`
 * arguments, so that many clients can share it and each count what ran for it; `wait` notes
 * its call the same way and answers once the test releases it.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { createEndpoint } from '../../src/server/index.js';
import { listen } from '../../src/node/index.js';
import { memoryStore } from '../../src/store/memory/index.js';

export interface CountingEndpoint {
  readonly url: URL;
  /** How many times `count` (or `wait`) ran with these arguments. */
  ran(run: number, tag: string): number;
  /** Lets every call of `wait` under way answer. */
  release(): void;
  close(): Promise<void>;
}

export async function startCountingEndpoint(): Promise<CountingEndpoint> {
  const runs = new Map<string, number>();
  const waiting: (() => void)[] = [];
  const server = (): McpServer => {
    const mcp = new McpServer({ name: 'counting', version: '1.0.0' });
    mcp.registerTool('count', { description: 'Counts its calls.', inputSchema: { run: z.number().int(), tag: z.string() } }, ({ run, tag }) => {
      const key = `${run}:${tag}`;
      runs.set(key, (runs.get(key) ?? 0) + 1);
      return { content: [{ type: 'text', text: String(runs.get(key)) }] };
    });
    // Counts its call like `count`, then answers only once the test releases it.
    mcp.registerTool('wait', { description: 'Counts its call, then waits.', inputSchema: { run: z.number().int(), tag: z.string() } }, async ({ run, tag }) => {
      const key = `${run}:${tag}`;
      runs.set(key, (runs.get(key) ?? 0) + 1);
      await new Promise<void>((resolve) => waiting.push(resolve));
      return { content: [{ type: 'text', text: 'released' }] };
    });
    return mcp;
  };
  const store = memoryStore();
  const endpoint = createEndpoint({ server, store, keepAliveMs: 0 });
  const listener = await listen(endpoint, { port: 0 });
  return {
    url: listener.url,
    ran: (run, tag) => runs.get(`${run}:${tag}`) ?? 0,
    release: () => {
      for (const go of waiting.splice(0)) go();
    },
    async close() {
      for (const go of waiting.splice(0)) go();
      await listener.close();
      await store.close();
    },
  };
}
