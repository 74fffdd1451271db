/**
 * A server process for the fault and memory tests:
 * `node --import tsx server-process.ts '<json spec>'` (see {@link Spec}). Prints
 * `ready <url>` once listening. Its RSS is the server's alone.
 *
 * Besides the example server's tools it has `produce` (the fault harness's producer: each
 * event carries a unique marker followed by multi-byte UTF-8, so a cut can be placed at
 * an exact byte of the wire format) and a test-only hook, `POST /__reset?session=ID`,
 * that calls `endpoint.resetReplayLog` (a new epoch: old cursors must be refused); and
 * `POST /__gc`, which collects garbage when the process runs with `--expose-gc`.
 */
import { createServer } from 'node:http';
import { z } from 'zod';
import { createEndpoint } from '../../src/server/index.js';
import { nodeHandler } from '../../src/node/index.js';
import { upgradeHandler } from '../../src/node/websocket.js';
import { openStore } from '../../src/cli/serve.js';
import { isRedisSpec, openRedisStore } from '../../src/cli/store-spec.js';
import { redisStore } from '../../src/store/redis/index.js';
import type { ClusterOptions } from '../../src/server/options.js';
import { loopbackGuard } from '../../src/server/host-guard.js';
import { memoryStore } from '../../src/store/memory/index.js';
import { sqliteStore } from '../../src/store/sqlite/index.js';
import { createExampleServer } from '../../src/example/index.js';
import type { RetentionOptions, Store } from '../../src/store/types.js';
import { AFTER_MARKER, marker } from './produce.js';

/** What the process is started with (JSON in argv). Imported as a type only: importing this module starts a server. */
export interface Spec {
  /** `memory`, `sqlite:PATH` (what `openStore` understands) or a Redis spec (`redis://…?prefix=P&leaseMs=N`). */
  store?: string;
  retention?: RetentionOptions;
  limits?: Record<string, number>;
  retryMs?: number;
  keepAliveMs?: number;
  port?: number;
  /** Host/Origin validation: on (loopback defaults) unless false. */
  hostGuard?: boolean;
  websocket?: boolean;
  /** Keep connections alive between requests (default false: one response per connection, for the proxy's plans). */
  keepAlive?: boolean;
}

async function store(spec: Spec): Promise<{ store: Store; cluster?: ClusterOptions }> {
  const s = spec.store ?? 'memory';
  if (isRedisSpec(s)) {
    // A Redis shared by replicas: the ownership protocol runs (leaseMs from the spec).
    if (!spec.retention) return openRedisStore(s);
    // redisStore reads the spec's query (prefix, leaseMs) itself.
    return { store: await redisStore({ url: s, retention: spec.retention }) };
  }
  if (!spec.retention) return { store: openStore(s) };
  if (s === 'memory') return { store: memoryStore({ retention: spec.retention }) };
  return { store: sqliteStore({ path: s.slice('sqlite:'.length), retention: spec.retention }) };
}

const spec = JSON.parse(process.argv[2] ?? '{}') as Spec;
const opened = await store(spec);
const endpoint = createEndpoint({
  server: () => {
    const server = createExampleServer();
    server.registerTool(
      'produce',
      {
        description: 'Fault-harness producer',
        inputSchema: {
          run: z.string(),
          count: z.number().int().min(0).max(100_000),
          pad: z.number().int().min(0).max(65_536).default(0),
          intervalMs: z.number().int().min(0).max(1000).default(0),
        },
      },
      async ({ run, count, pad, intervalMs }, extra) => {
        const fill = 'ü'.repeat(pad);
        for (let seq = 1; seq <= count; seq++) {
          if (intervalMs > 0) await new Promise((resolve) => setTimeout(resolve, intervalMs));
          await extra.sendNotification({
            method: 'notifications/message',
            params: { level: 'info', logger: 'produce', data: { run, seq, text: `${marker(run, seq)}${AFTER_MARKER}${fill}` } },
          });
        }
        return { content: [{ type: 'text', text: `produced ${count}` }] };
      },
    );
    return server;
  },
  store: opened.store,
  ...(opened.cluster ? { cluster: opened.cluster } : {}),
  retryMs: spec.retryMs ?? 100,
  keepAliveMs: spec.keepAliveMs ?? 0,
  ...(spec.hostGuard === false ? { hostGuard: false as const } : {}),
  ...(spec.websocket ? { upgrade: { websocket: true } } : {}),
  ...(spec.limits ? { limits: spec.limits } : {}),
});
const handler = nodeHandler(endpoint);
const http = createServer((req, res) => {
  // One response per connection, so a proxy's per-connection plan applies to one stream.
  if (spec.keepAlive !== true) res.shouldKeepAlive = false;
  if (req.method === 'POST' && req.url === '/__gc') {
    // Memory measurements: with --expose-gc, collect before reading RSS.
    (globalThis as { gc?: () => void }).gc?.();
    res.writeHead(204).end();
    return;
  }
  if (req.method === 'POST' && req.url?.startsWith('/__reset?')) {
    const session = new URLSearchParams(req.url.slice('/__reset?'.length)).get('session') ?? '';
    endpoint.resetReplayLog(session).then(
      () => res.writeHead(204).end(),
      (error: Error) => res.writeHead(409).end(error.message),
    );
    return;
  }
  handler(req, res);
});
http.on('upgrade', upgradeHandler(endpoint, '/mcp', 4 * 1024 * 1024));
await new Promise<void>((resolve) => http.listen(spec.port ?? 0, '127.0.0.1', resolve));
const address = http.address();
const port = typeof address === 'object' && address ? address.port : 0;
if (spec.hostGuard !== false) endpoint.defaultHostGuard(loopbackGuard(port, '127.0.0.1'));
process.stdout.write(`ready http://127.0.0.1:${port}/mcp\n`);
