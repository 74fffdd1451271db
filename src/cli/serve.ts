/** `mcp-continuity serve`: the example server on our endpoint. */
import { parseArgs } from 'node:util';
import { createExampleServer } from '../example/index.js';
import { listen } from '../node/listen.js';
import { createEndpoint } from '../server/endpoint.js';
import { memoryStore } from '../store/memory.js';
import { sqliteStore } from '../store/sqlite.js';
import type { Store } from '../store/types.js';
import { isRedisSpec, openRedisStore } from './store-spec.js';
import { UsageError } from './usage.js';

export const SERVE_USAGE = `Usage: mcp-continuity serve [--port N] [--host H] [--path P] [--store S] [--json]

Starts the example MCP server (tools, resources, prompts; the tool "emit" streams
notifications) on a continuity-proving Streamable HTTP endpoint.

  --port N       port to listen on (default 3000; 0 picks a free port)
  --host H       address to bind (default 127.0.0.1; loopback binds validate Host/Origin)
  --path P       endpoint path (default /mcp)
  --store S      sqlite:PATH (default sqlite:./mcp-continuity.db: sessions survive
                 restarts) or memory (sessions die with the process)
  --json         answer POSTs with JSON instead of SSE
  --websocket    offer the SSE→WebSocket upgrade to clients that ask for it
  --quiet        print only the URL`;

/** The store `serve` uses when none is named: SQLite, the embedded default. */
export const DEFAULT_STORE = 'sqlite:./mcp-continuity.db';

/** Parses a `--store` value: `memory` or `sqlite:PATH`. */
export function openStore(spec: string): Store {
  if (spec === 'memory') return memoryStore();
  if (spec.startsWith('sqlite:') && spec.length > 'sqlite:'.length) return sqliteStore({ path: spec.slice('sqlite:'.length) });
  throw new UsageError(`Unknown store ${JSON.stringify(spec)}: expected memory or sqlite:PATH`);
}

export async function serve(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string', default: '3000' },
      host: { type: 'string', default: '127.0.0.1' },
      path: { type: 'string', default: '/mcp' },
      store: { type: 'string', default: DEFAULT_STORE },
      json: { type: 'boolean', default: false },
      websocket: { type: 'boolean', default: false },
      quiet: { type: 'boolean', default: false },
    },
    strict: true,
  });
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be an integer 0-65535, got ${values.port}`);
  const redis = isRedisSpec(values.store) ? await openRedisStore(values.store) : undefined;
  const store = redis?.store ?? openStore(values.store);
  const endpoint = createEndpoint({
    cluster: redis?.cluster,
    server: () => createExampleServer(),
    store,
    jsonResponse: values.json,
    upgrade: { websocket: values.websocket },
    onError: (error) => {
      if (!values.quiet) console.error(`[mcp-continuity] ${error.message}`);
    },
  });
  const listener = await listen(endpoint, { port, host: values.host, path: values.path });
  console.log(values.quiet ? listener.url.href : `mcp-continuity serving the example server at ${listener.url.href} (store: ${values.store})`);
  const stop = async (): Promise<void> => {
    await listener.close();
    await store.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}
