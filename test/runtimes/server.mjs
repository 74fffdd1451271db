// The endpoint served by Bun (`Bun.serve({ fetch })`) or Deno (`Deno.serve`), from the built
// package (dist/: build first), with the example server. Prints one JSON line: the port, or
// with STORE=sqlite the error the SQLite store gives on this runtime.
/* global Bun, Deno, process, console */
import { createEndpoint } from '../../dist/server/index.js';
import { createExampleServer } from '../../dist/example/index.js';

const env = (name) => (typeof Deno === 'undefined' ? process.env[name] : Deno.env.get(name));
const runtime = typeof Bun === 'undefined' ? 'deno' : 'bun';
let store;
if (env('STORE') === 'sqlite') {
  try {
    const { sqliteStore } = await import('../../dist/store/sqlite/index.js');
    store = sqliteStore({ path: env('SQLITE_PATH') });
    console.log(JSON.stringify({ runtime, sqlite: 'ok' }));
  } catch (error) {
    console.log(JSON.stringify({ runtime, sqlite: error.message }));
    process.exit(0);
  }
}
const endpoint = createEndpoint({
  server: () => createExampleServer(),
  retryMs: 20,
  // The chaos proxy in front changes the port in Host.
  hostGuard: false,
  ...(store === undefined ? {} : { store }),
});
const handle = (request) => endpoint.handle(request);
if (runtime === 'bun') {
  // idleTimeout (seconds) above the endpoint's 15 s keep-alive: Bun's default 10 s cuts idle streams
  // (BUN_IDLE_TIMEOUT=10 shows the idle test failing without it).
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, idleTimeout: Number(env('BUN_IDLE_TIMEOUT') ?? 30), fetch: handle });
  console.log(JSON.stringify({ runtime, port: server.port }));
} else {
  Deno.serve({ hostname: '127.0.0.1', port: 0, onListen: ({ port }) => console.log(JSON.stringify({ runtime, port })) }, handle);
}
