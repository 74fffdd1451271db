/**
 * A server process for the fault and memory tests:
 * `node --import tsx server-process.ts '<json options>'` with `{ store?, limits?, retryMs?, keepAliveMs? }`.
 * Prints `ready <url>` once listening. Its RSS is the server's alone.
 */
import { createEndpoint } from '../../src/server/index.js';
import { listen } from '../../src/node/index.js';
import { openStore } from '../../src/cli/serve.js';
import { createExampleServer } from '../../src/example/index.js';

interface Spec {
  store?: string;
  limits?: Record<string, number>;
  retryMs?: number;
  keepAliveMs?: number;
  port?: number;
}

const spec = JSON.parse(process.argv[2] ?? '{}') as Spec;
const endpoint = createEndpoint({
  server: () => createExampleServer(),
  store: openStore(spec.store ?? 'memory'),
  retryMs: spec.retryMs ?? 100,
  keepAliveMs: spec.keepAliveMs ?? 0,
  ...(spec.limits ? { limits: spec.limits } : {}),
});
const listener = await listen(endpoint, { port: spec.port ?? 0 });
process.stdout.write(`ready ${listener.url.href}\n`);
