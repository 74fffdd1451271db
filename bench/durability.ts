/**
 * The cost of the Redis store's durability option (`waitReplicas`: an append reaches clients
 * only once that many replicas acknowledged it, `WAIT`). Starts its own Redis primary and
 * one replica on loopback, and measures, interleaved, with `waitReplicas` 0 and 1:
 *   - events/s of one burst through the owner;
 *   - send-to-read latency through the owner, p50/p99 (notifications 1 ms apart).
 * Prints a table. Usage: node --import tsx bench/durability.ts [--events N] [--runs N] [--latency N]
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { createEndpoint } from '../src/server/index.js';
import { listen, type Listener } from '../src/node/index.js';
import { redisStore } from '../src/store/redis/index.js';
import type { Store } from '../src/store/types.js';
import { redisCommand, startRedis } from '../test/helpers/redis.js';
import { initialize, rpc, send, sessionHeaders } from '../test/helpers/sse-client.js';
import { waitFor } from '../test/helpers/wait.js';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '20000' },
    runs: { type: 'string', default: '3' },
    latency: { type: 'string', default: '2000' },
  },
});
const EVENTS = Number(values.events);
const RUNS = Number(values.runs);
const LATENCY_EVENTS = Number(values.latency);

function benchServer(): McpServer {
  const mcp = new McpServer({ name: 'bench', version: '1.0.0' }, { capabilities: { logging: {} } });
  const pad = 'x'.repeat(40);
  mcp.registerTool('burst', { inputSchema: { count: z.number().int() } }, async ({ count }, extra) => {
    for (let i = 1; i <= count; i++) await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data: { seq: i, pad } } });
    return { content: [{ type: 'text', text: `burst ${count}` }] };
  });
  mcp.registerTool('stamp', { inputSchema: { count: z.number().int() } }, async ({ count }, extra) => {
    for (let i = 1; i <= count; i++) {
      await new Promise((resolve) => setTimeout(resolve, 1));
      await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data: { seq: i, at: performance.now() } } });
    }
    return { content: [{ type: 'text', text: `stamp ${count}` }] };
  });
  return mcp;
}

async function burst(url: URL): Promise<number> {
  const h = await initialize(url);
  const started = performance.now();
  const response = await send(url, {
    body: rpc('tools/call', { name: 'burst', arguments: { count: EVENTS } }),
    headers: sessionHeaders(h),
    timeoutMs: 600_000,
  });
  const seconds = (performance.now() - started) / 1000;
  if (response.events.length < EVENTS) throw new Error(`burst: got ${response.events.length} events`);
  await send(url, { method: 'DELETE', headers: sessionHeaders(h) });
  return EVENTS / seconds;
}

async function latencies(url: URL): Promise<number[]> {
  const h = await initialize(url);
  const out: number[] = [];
  await send(url, {
    body: rpc('tools/call', { name: 'stamp', arguments: { count: LATENCY_EVENTS } }),
    headers: sessionHeaders(h),
    timeoutMs: 600_000,
    cutWhen: (event) => {
      const at = event.data.includes('"at"') ? (JSON.parse(event.data) as { params: { data: { at: number } } }).params.data.at : undefined;
      if (at !== undefined) out.push(performance.now() - at);
      return false;
    },
  });
  await send(url, { method: 'DELETE', headers: sessionHeaders(h) });
  return out;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const pct = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))] ?? NaN;
const fmt = (n: number): string => (n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(2));

async function main(): Promise<void> {
  const primary = await startRedis();
  const replica = await startRedis(['--replicaof', '127.0.0.1', String(primary.port)]);
  const opened: Array<{ listener: Listener; store: Store }> = [];
  try {
    await waitFor(async () => (await redisCommand(replica.port, ['INFO', 'replication'])).includes('master_link_status:up'), 'the replica to sync');
    const cells = [0, 1].map((waitReplicas) => ({
      waitReplicas,
      rates: [] as number[],
      p50: [] as number[],
      p99: [] as number[],
      url: undefined as URL | undefined,
    }));
    for (const cell of cells) {
      const store = await redisStore({ url: primary.url, waitReplicas: cell.waitReplicas });
      const listener = await listen(createEndpoint({ server: () => benchServer(), store, keepAliveMs: 0 }), { port: 0 });
      opened.push({ listener, store });
      cell.url = listener.url;
      await burst(listener.url); // warm-up
    }
    for (let run = 0; run < RUNS; run++) {
      for (const cell of cells) {
        const url = cell.url as URL;
        cell.rates.push(await burst(url));
        const xs = await latencies(url);
        cell.p50.push(pct(xs, 50));
        cell.p99.push(pct(xs, 99));
      }
    }
    const rows = [['waitReplicas', 'events/s (min–max)', 'latency via the owner, ms p50 / p99', 'p99 range']];
    for (const c of cells) {
      rows.push([
        String(c.waitReplicas),
        `${fmt(median(c.rates))} (${fmt(Math.min(...c.rates))}–${fmt(Math.max(...c.rates))})`,
        `${fmt(median(c.p50))} / ${fmt(median(c.p99))}`,
        `${fmt(Math.min(...c.p99))}–${fmt(Math.max(...c.p99))}`,
      ]);
    }
    const [off, on] = cells as [(typeof cells)[0], (typeof cells)[0]];
    const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
    console.log(
      `Redis durability option: ${EVENTS} events × ${RUNS} runs (~100 B each), ${LATENCY_EVENTS} events 1 ms apart for latency; one primary, one replica, loopback`,
    );
    for (const r of rows) console.log(`| ${r.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`);
    console.log(`waitReplicas 1 / 0: ${(median(on.rates) / median(off.rates)).toFixed(2)}× events/s`);
  } finally {
    for (const o of opened) await o.listener.close();
    for (const o of opened) await o.store.close();
    await replica.stop();
    await primary.stop();
  }
}

await main();
