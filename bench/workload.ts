/**
 * The one workload every contender serves: a tool `burst` that sends `count` logging
 * notifications related to the call, awaiting each send (as a tool does), then returns.
 * Each notification carries the sender's clock (`t`, ms, shared by processes on one host)
 * for the event latency, and padding so its JSON-RPC text is about `size` bytes.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';

/** High-resolution wall clock in ms, comparable across processes on one machine. */
export function clock(): number {
  return performance.timeOrigin + performance.now();
}

/** JSON-RPC text of a notification without padding, for sizing: `{"method":…,"params":{…}}`. */
const OVERHEAD = JSON.stringify({
  method: 'notifications/message',
  params: { level: 'info', data: { t: 1_700_000_000_000.123, pad: '' } },
  jsonrpc: '2.0',
}).length;

/** Padding that makes a notification's text about `size` bytes. */
export function padFor(size: number): string {
  return 'x'.repeat(Math.max(0, size - OVERHEAD));
}

/** The notification's params (the SDK and the writers without the SDK send the same). */
export function notificationParams(pad: string): { level: 'info'; data: { t: number; pad: string } } {
  return { level: 'info', data: { t: clock(), pad } };
}

/** A fresh `McpServer` with the `burst` tool. */
export function benchServer(): McpServer {
  const mcp = new McpServer({ name: 'bench', version: '1.0.0' }, { capabilities: { logging: {} } });
  mcp.registerTool('burst', { inputSchema: { count: z.number().int(), size: z.number().int() } }, async ({ count, size }, extra) => {
    const pad = padFor(size);
    for (let i = 0; i < count; i++) {
      await extra.sendNotification({ method: 'notifications/message', params: notificationParams(pad) });
    }
    return { content: [{ type: 'text', text: `burst ${count}` }] };
  });
  return mcp;
}

/** Names of the contenders, in table order. */
export const CONTENDERS = ['sdk', 'sdk-store', 'memory', 'sqlite', 'bare-event', 'bare-batched', 'ceiling'] as const;
export type Contender = (typeof CONTENDERS)[number];

export const LABELS: Record<Contender, string> = {
  sdk: 'SDK v1 transport',
  'sdk-store': 'SDK v1 + example InMemoryEventStore',
  memory: 'mcp-continuity, memory',
  sqlite: 'mcp-continuity, SQLite',
  'bare-event': 'bare node:http, 1 write/event',
  'bare-batched': 'bare node:http, 64 KiB writes',
  ceiling: 'protocol ceiling (McpServer + bare writer)',
};
