/**
 * A small SDK v1 server for stream tests: `burst` fires `count` related notifications
 * without awaiting between them (a same-millisecond burst), `broadcast` sends `count`
 * notifications related to no request, so they travel on the standalone GET stream.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';

export function createStreamServer(): McpServer {
  const mcp = new McpServer({ name: 'stream-test', version: '1.0.0' }, { capabilities: { logging: {} } });
  mcp.registerTool('burst', { inputSchema: { count: z.number().int().min(0) } }, async ({ count }, extra) => {
    const sends: Promise<void>[] = [];
    for (let i = 1; i <= count; i++) {
      sends.push(extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data: { seq: i } } }));
    }
    await Promise.all(sends);
    return { content: [{ type: 'text', text: `burst ${count}` }] };
  });
  mcp.registerTool(
    'broadcast',
    { inputSchema: { count: z.number().int().min(0), intervalMs: z.number().int().min(0).default(0) } },
    async ({ count, intervalMs }) => {
      for (let i = 1; i <= count; i++) {
        if (intervalMs > 0) await new Promise((r) => setTimeout(r, intervalMs));
        await mcp.server.notification({ method: 'notifications/message', params: { level: 'info', data: { seq: i } } });
      }
      return { content: [{ type: 'text', text: `broadcast ${count}` }] };
    },
  );
  return mcp;
}

/** Jepsen-style counts over the `data.seq` values a client received. */
export interface DeliveryReport {
  received: number;
  lost: number;
  duplicated: number;
  reordered: number;
  unexpected: number;
}

export function deliveryReport(seqs: number[], expected: number): DeliveryReport {
  const seen = new Set<number>();
  let duplicated = 0;
  let reordered = 0;
  let unexpected = 0;
  let previous = 0;
  for (const s of seqs) {
    if (!Number.isInteger(s) || s < 1 || s > expected) {
      unexpected++;
      continue;
    }
    if (seen.has(s)) duplicated++;
    else if (s < previous) reordered++;
    seen.add(s);
    previous = Math.max(previous, s);
  }
  return { received: seqs.length, lost: expected - seen.size, duplicated, reordered, unexpected };
}

export { prng } from './prng.js';
