/**
 * `serve --metrics`: a small HTTP server beside the MCP one, for the platform rather than
 * for clients. `/metrics` is a Prometheus scrape of everything the package records through
 * OpenTelemetry (the exporter registered here as the global meter provider), `/healthz`
 * says the process is alive, `/readyz` says it should get traffic: the store answers and
 * the endpoint is not draining. The OpenTelemetry SDK loads only when this is used.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { metrics } from '@opentelemetry/api';
import { UsageError } from './usage.js';

/** What `/readyz` asks. */
export interface Readiness {
  /** True from the moment the replica starts leaving (SIGTERM): it should get no new traffic. */
  readonly draining: boolean;
  /** Resolves when the store answers; rejects (or takes too long) when it does not. */
  storeReachable(): Promise<unknown>;
}

export interface OpsServer {
  readonly server: Server;
  /** The scrape URL (`…/metrics`). */
  readonly url: URL;
  close(): Promise<void>;
}

/** How long `/readyz` waits for the store, ms. */
const STORE_CHECK_MS = 2000;

/** Parses `[HOST:]PORT` (`9464`, `0.0.0.0:9464`, `[::1]:9464`); the host defaults to loopback. */
export function parseHostPort(spec: string): { host: string; port: number } {
  const match = /^(?:(\[[^\]]+\]|[^:]+):)?(\d{1,5})$/.exec(spec);
  const port = Number(match?.[2]);
  if (!match || port > 65535) throw new UsageError(`--metrics takes [HOST:]PORT (e.g. 9464 or 0.0.0.0:9464), got ${JSON.stringify(spec)}`, 'serve');
  return { host: (match[1] ?? '127.0.0.1').replace(/^\[|\]$/g, ''), port };
}

/** Registers the Prometheus exporter as the global meter provider and serves it with the health routes. */
export async function startOpsServer(at: { host: string; port: number }, readiness: Readiness): Promise<OpsServer> {
  const [{ PrometheusExporter }, { MeterProvider }] = await Promise.all([import('@opentelemetry/exporter-prometheus'), import('@opentelemetry/sdk-metrics')]);
  const exporter = new PrometheusExporter({ preventServerStart: true });
  const provider = new MeterProvider({ readers: [exporter] });
  metrics.setGlobalMeterProvider(provider);
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') return plain(res, 405, 'method not allowed\n');
    if (path === '/metrics') return exporter.getMetricsRequestHandler(req, res);
    if (path === '/healthz') return plain(res, 200, 'ok\n');
    if (path === '/readyz') return void ready(readiness).then((why) => plain(res, why === undefined ? 200 : 503, `${why ?? 'ready'}\n`));
    plain(res, 404, 'not found: /metrics, /healthz, /readyz\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(at.port, at.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = at.host.includes(':') ? `[${at.host}]` : at.host;
  return {
    server,
    url: new URL(`http://${host}:${port}/metrics`),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      metrics.disable();
      await provider.shutdown().catch(() => {});
    },
  };
}

/** Why the replica is not ready, or undefined when it is. */
async function ready(readiness: Readiness): Promise<string | undefined> {
  if (readiness.draining) return 'draining';
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<string>((resolve) => (timer = setTimeout(() => resolve('store not answering'), STORE_CHECK_MS)));
  try {
    return await Promise.race([
      readiness.storeReachable().then(
        () => undefined,
        () => 'store unreachable',
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function plain(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' }).end(body);
}
