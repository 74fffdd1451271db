/**
 * The Redis store in a cluster, measured in one run (prints a table):
 *   1. events/s of one replica on the Redis store against the SQLite store (target ≥ 0.5×);
 *   2. tail latency across replicas: from the tool's send on the owner to the client's read
 *      through another replica (POST carried to the owner, response tailed from Redis),
 *      p50/p99 (target p99 ≤ 5 ms), beside the same latency through the owner itself.
 * Replicas are endpoints in this process, each with its own Redis connections, so every
 * message crosses Redis exactly as between processes (and the clock is shared).
 * Usage: node --import tsx bench/cluster.ts [--events N] [--runs N] [--redis URL]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { createEndpoint, type Endpoint } from '../src/server/index.js';
import { listen, type Listener } from '../src/node/index.js';
import { redisStore } from '../src/store/redis/index.js';
import { sqliteStore } from '../src/store/sqlite/index.js';
import type { Store } from '../src/store/types.js';
import { initialize, rpc, send, sessionHeaders } from '../test/helpers/sse-client.js';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '20000' },
    runs: { type: 'string', default: '3' },
    latency: { type: 'string', default: '2000' },
    redis: { type: 'string', default: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' },
  },
});
const EVENTS = Number(values.events);
const RUNS = Number(values.runs);
const LATENCY_EVENTS = Number(values.latency);

/** `burst`: `count` notifications of ~100 B, each awaited. `stamp`: notifications carrying their send time, 1 ms apart. */
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

interface Replica {
  endpoint: Endpoint;
  listener: Listener;
  store: Store;
}

async function replica(store: Store, cluster: boolean): Promise<Replica> {
  const endpoint = createEndpoint({ server: () => benchServer(), store, keepAliveMs: 0, ...(cluster ? { cluster: { enabled: true } } : {}) });
  const listener = await listen(endpoint, { port: 0 });
  return { endpoint, listener, store };
}

async function closeAll(replicas: Replica[]): Promise<void> {
  for (const r of replicas) await r.listener.close();
  for (const r of replicas) await r.store.close();
}

/** One burst of `EVENTS` events through `url`; events/s to the last byte. */
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

/** Send-to-read latencies (ms) of `LATENCY_EVENTS` events, POSTed to `via` on a session owned by `owner`. */
async function latencies(owner: URL, via: URL): Promise<number[]> {
  const h = await initialize(owner);
  const out: number[] = [];
  await send(via, {
    body: rpc('tools/call', { name: 'stamp', arguments: { count: LATENCY_EVENTS } }),
    headers: sessionHeaders(h),
    timeoutMs: 600_000,
    cutWhen: (event) => {
      const at = event.data.includes('"at"') ? (JSON.parse(event.data) as { params: { data: { at: number } } }).params.data.at : undefined;
      if (at !== undefined) out.push(performance.now() - at);
      return false;
    },
  });
  await send(owner, { method: 'DELETE', headers: sessionHeaders(h) });
  return out;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const pct = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))] ?? NaN;
const fmt = (n: number): string => (n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(2));

async function main(): Promise<void> {
  const prefix = `mcpc-bench:${randomBytes(4).toString('hex')}:`;
  const dir = mkdtempSync(join(tmpdir(), 'mcpc-bench-cluster-'));
  const redisOne = await replica(await redisStore({ url: values.redis, keyPrefix: prefix }), true);
  const sqlite = await replica(sqliteStore({ path: join(dir, 'bench.db') }), false);
  const rates = { redis: [] as number[], sqlite: [] as number[] };
  try {
    await burst(redisOne.listener.url); // warm-up
    await burst(sqlite.listener.url);
    for (let run = 0; run < RUNS; run++) {
      rates.redis.push(await burst(redisOne.listener.url));
      rates.sqlite.push(await burst(sqlite.listener.url));
    }
  } finally {
    await closeAll([sqlite]);
  }
  // A second replica on the same Redis, with connections of its own.
  const other = await replica(await redisStore({ url: values.redis, keyPrefix: prefix }), true);
  // Interleaved rounds; each row reports the median round's p50 and p99 (with the range of p99s).
  const same = { p50: [] as number[], p99: [] as number[] };
  const cross = { p50: [] as number[], p99: [] as number[] };
  try {
    await latencies(redisOne.listener.url, other.listener.url); // warm-up
    for (let run = 0; run < RUNS; run++) {
      for (const [into, via] of [
        [same, redisOne],
        [cross, other],
      ] as const) {
        const xs = await latencies(redisOne.listener.url, via.listener.url);
        into.p50.push(pct(xs, 50));
        into.p99.push(pct(xs, 99));
      }
    }
  } finally {
    await closeAll([redisOne, other]);
    rmSync(dir, { recursive: true, force: true });
  }
  const ratio = median(rates.redis) / median(rates.sqlite);
  const rows = [
    ['measure', 'median', 'min', 'max', 'target', 'met'],
    ['events/s, SQLite, 1 replica', fmt(median(rates.sqlite)), fmt(Math.min(...rates.sqlite)), fmt(Math.max(...rates.sqlite)), '', ''],
    ['events/s, Redis, 1 replica', fmt(median(rates.redis)), fmt(Math.min(...rates.redis)), fmt(Math.max(...rates.redis)), '', ''],
    ['Redis / SQLite', `${ratio.toFixed(2)}×`, '', '', '≥ 0.5×', ratio >= 0.5 ? 'yes' : 'NO'],
    [
      'latency via the owner, ms p50 / p99',
      `${fmt(median(same.p50))} / ${fmt(median(same.p99))}`,
      fmt(Math.min(...same.p99)),
      fmt(Math.max(...same.p99)),
      '',
      '',
    ],
    [
      'latency across replicas, ms p50 / p99',
      `${fmt(median(cross.p50))} / ${fmt(median(cross.p99))}`,
      fmt(Math.min(...cross.p99)),
      fmt(Math.max(...cross.p99)),
      'p99 ≤ 5',
      median(cross.p99) <= 5 ? 'yes' : 'NO',
    ],
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  console.log(`Redis store in a cluster: ${EVENTS} events × ${RUNS} runs (~100 B each), ${LATENCY_EVENTS} events 1 ms apart for latency (${values.redis})`);
  for (const r of rows) console.log(`| ${r.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`);
}

await main();
