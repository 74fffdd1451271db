/**
 * A replica process for at-most-once tests: `node --import tsx blocking-replica.ts <redis url>
 * <key prefix> <leaseMs>`. Its `once` tool prints `ran <key>` on stdout each time it runs,
 * then blocks the process (a busy loop: no timer runs, no lease is renewed) for `blockMs`.
 * Prints `ready <url>` once listening.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { createEndpoint } from '../../src/server/index.js';
import { listen } from '../../src/node/index.js';
import { redisStore } from '../../src/store/redis/index.js';

const [url = 'redis://127.0.0.1:6379', keyPrefix = 'mcpc:', leaseText = '100'] = process.argv.slice(2);

function server(): McpServer {
  const mcp = new McpServer({ name: 'at-most-once', version: '1.0.0' });
  mcp.registerTool('once', { inputSchema: { key: z.string(), blockMs: z.number().int().min(0) } }, async ({ key, blockMs }) => {
    process.stdout.write(`ran ${key}\n`);
    const until = performance.now() + blockMs;
    while (performance.now() < until) {
      // Busy: this process renews nothing and answers nothing meanwhile.
    }
    return { content: [{ type: 'text', text: key }] };
  });
  return mcp;
}

const store = await redisStore({ url, keyPrefix });
const endpoint = createEndpoint({ server, store, keepAliveMs: 0, cluster: { leaseMs: Number(leaseText) } });
const listener = await listen(endpoint, { port: 0 });
process.stdout.write(`ready ${listener.url.href}\n`);
