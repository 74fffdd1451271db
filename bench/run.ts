/**
 * Benchmarks, reported as ratios measured in one run (DESIGN §10): events/s through the
 * official SDK v1 StreamableHTTPServerTransport, through our endpoint on the memory and
 * SQLite stores, and through a bare node:http SSE writer of the same frames; and the cost
 * of resuming 40 events from a 100k-event log. Usage: npm run bench [-- --events N]
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { createEndpoint } from '../src/server/index.js';
import { listen } from '../src/node/index.js';
import { memoryStore } from '../src/store/memory.js';
import { sqliteStore } from '../src/store/sqlite.js';
import { encodeSseEvent } from '../src/protocol/sse.js';
import { initialize, rpc, send, sessionHeaders } from '../test/helpers/sse-client.js';

const { values } = parseArgs({ options: { events: { type: 'string', default: '20000' }, runs: { type: 'string', default: '3' } } });
const EVENTS = Number(values.events);
const RUNS = Number(values.runs);

/** The workload: `count` notifications related to the call, each awaited, then a result. */
function benchServer(): McpServer {
  const mcp = new McpServer({ name: 'bench', version: '1.0.0' }, { capabilities: { logging: {} } });
  mcp.registerTool('burst', { inputSchema: { count: z.number().int() } }, async ({ count }, extra) => {
    for (let i = 1; i <= count; i++) await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data: { seq: i } } });
    return { content: [{ type: 'text', text: `burst ${count}` }] };
  });
  return mcp;
}

async function sdkServer(): Promise<{ url: URL; close: () => Promise<void> }> {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
    const id = req.headers['mcp-session-id'] as string | undefined;
    let transport = id ? transports.get(id) : undefined;
    if (!transport) {
      transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (sid) => void transports.set(sid, transport as StreamableHTTPServerTransport) });
      await benchServer().connect(transport);
    }
    await transport.handleRequest(req, res, body);
  });
  return serve(server);
}

async function bareServer(): Promise<{ url: URL; close: () => Promise<void> }> {
  // The floor: the same SSE frames written straight to the socket, no protocol at all.
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 'bare' });
    if (req.method !== 'POST') { res.end(); return; }
    let out = '';
    for (let i = 1; i <= EVENTS; i++) {
      out += encodeSseEvent({ id: `e.0.${i}.AAAAAAAAAAAAAAAA`, data: JSON.stringify({ method: 'notifications/message', params: { level: 'info', data: { seq: i } }, jsonrpc: '2.0' }) });
      if (out.length > 65536) {
        res.write(out);
        out = '';
      }
    }
    res.end(out + encodeSseEvent({ id: 'e.0.x', data: JSON.stringify({ jsonrpc: '2.0', id: 2, result: {} }) }));
  });
  return serve(server);
}

async function serve(server: Server): Promise<{ url: URL; close: () => Promise<void> }> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: new URL(`http://127.0.0.1:${port}/mcp`), close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }) };
}

async function eventsPerSecond(url: URL, bare = false): Promise<number> {
  const rates: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const h = bare ? { sessionId: 'bare', epoch: '', protocolVersion: '2025-11-25', response: undefined as never } : await initialize(url);
    const started = performance.now();
    const r = await send(url, { body: rpc('tools/call', { name: 'burst', arguments: { count: EVENTS } }), headers: sessionHeaders(h), timeoutMs: 600_000 });
    const seconds = (performance.now() - started) / 1000;
    const notifications = r.events.filter((e) => e.data.includes('notifications/message')).length;
    if (notifications !== EVENTS) throw new Error(`expected ${EVENTS} notifications, got ${notifications}`);
    rates.push(EVENTS / seconds);
  }
  return median(rates);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

async function ours(store: 'memory' | 'sqlite', maxEvents = EVENTS * 2): Promise<{ url: URL; close: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-bench-'));
  const s = store === 'memory' ? memoryStore({ retention: { maxEvents, maxBytes: 1 << 30 } }) : sqliteStore({ path: join(dir, 'bench.db'), retention: { maxEvents, maxBytes: 1 << 30 } });
  // A large reader buffer: the bench reads whole streams, and a cut reader would skew the numbers.
  const limits = { maxBufferedBytes: 1 << 30 };
  const listener = await listen(createEndpoint({ server: () => benchServer(), store: s, keepAliveMs: 0, limits }), { port: 0 });
  return { url: listener.url, close: async () => { await listener.close(); await s.close(); rmSync(dir, { recursive: true, force: true }); } };
}

async function measure(name: string, start: () => Promise<{ url: URL; close: () => Promise<void> }>, bare = false): Promise<number> {
  const s = await start();
  try {
    const rate = await eventsPerSecond(s.url, bare);
    console.log(`${name.padEnd(34)} ${Math.round(rate).toLocaleString('en-US').padStart(10)} events/s`);
    return rate;
  } finally {
    await s.close();
  }
}

/** Resume cost: 40 events from the end of a 100k-event stream, through the endpoint. */
async function resumeCost(): Promise<number> {
  const big = 100_000;
  const s = await ours('memory', big + 10);
  try {
    const h = await initialize(s.url);
    const r = await send(s.url, { body: rpc('tools/call', { name: 'burst', arguments: { count: big } }), headers: sessionHeaders(h), timeoutMs: 600_000 });
    const cursor = r.events[r.events.length - 41]?.id as string;
    const times: number[] = [];
    for (let i = 0; i < 20; i++) {
      const started = performance.now();
      const replay = await send(s.url, { headers: sessionHeaders(h, { 'last-event-id': cursor }) });
      times.push(performance.now() - started);
      if (replay.events.length !== 40) throw new Error(`replayed ${replay.events.length}`);
    }
    return median(times);
  } finally {
    await s.close();
  }
}

console.log(`# ${EVENTS} related notifications per call, median of ${RUNS} runs, node ${process.version}`);
const sdk = await measure('official SDK v1 transport', sdkServer);
const memory = await measure('mcp-continuity, memory store', () => ours('memory'));
const sqlite = await measure('mcp-continuity, SQLite store', () => ours('sqlite'));
const bare = await measure('bare node:http SSE writer', bareServer, true);
const resume = await resumeCost();
console.log(`resume 40 of 100,000 events (memory):  ${resume.toFixed(2)} ms median over 20 (round trip on loopback)`);
console.log('');
console.log(`ratio memory / SDK:  ${(memory / sdk).toFixed(1)}x   (target >= 10x)`);
console.log(`ratio SQLite / SDK:  ${(sqlite / sdk).toFixed(1)}x   (target >= 5x)`);
console.log(`ratio memory / bare: ${(memory / bare).toFixed(2)}x  (target >= 0.5x)`);
