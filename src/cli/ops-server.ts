/**
 * `serve --metrics`: a small HTTP server beside the MCP one, for the platform rather than
 * for clients. `/metrics` is a Prometheus scrape of everything the package records through
 * OpenTelemetry (the exporter registered here as the global meter provider), `/healthz`
 * says the process is alive, `/readyz` says it should get traffic: the store answers and
 * the endpoint is not draining. The OpenTelemetry SDK loads only when this is used. It checks
 * `Host` and `Origin` like the MCP endpoint: on loopback, a page that rebinds its own name to
 * 127.0.0.1 cannot read it.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { metrics } from '@opentelemetry/api';
import type { PrometheusExporter, PrometheusSerializer } from '@opentelemetry/exporter-prometheus';
import type { Resource } from '@opentelemetry/resources';
import { allowHosts, checkHostAndOrigin, isLoopbackHost, loopbackGuard, type HostGuardOptions } from '../server/host-guard.js';
import { METRIC } from '../telemetry/meter.js';
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

/** Where the ops server listens and what it answers to. */
export interface OpsServerOptions {
  readonly host: string;
  readonly port: number;
  /** The process's resource (`target_info`); the SDK's default when absent. */
  readonly resource?: Resource | undefined;
  /** Further `Host` names a loopback bind accepts (`serve --allowed-hosts`). */
  readonly allowedHosts?: readonly string[] | undefined;
}

/**
 * The series one histogram or counter keeps at most: past it the SDK folds new attribute sets
 * into one overflow series. Our attributes come from bounded sets, so this is a second wall.
 */
const CARDINALITY_LIMIT = 500;

/** The histograms in seconds: their Prometheus names end in `_seconds`, as other exporters of the conventions spell them. */
const SECONDS = [METRIC.serverOperationDuration, METRIC.serverSessionDuration, METRIC.clientOperationDuration, METRIC.clientSessionDuration];

/** Registers the Prometheus exporter as the global meter provider and serves it with the health routes. */
export async function startOpsServer(at: OpsServerOptions, readiness: Readiness): Promise<OpsServer> {
  const [{ PrometheusExporter, PrometheusSerializer }, { MeterProvider }] = await Promise.all([
    import('@opentelemetry/exporter-prometheus'),
    import('@opentelemetry/sdk-metrics'),
  ]);
  const exporter = new PrometheusExporter({ preventServerStart: true });
  const serializer = new PrometheusSerializer();
  const provider = new MeterProvider({
    ...(at.resource ? { resource: at.resource } : {}),
    readers: [exporter],
    // One view per instrument (two views on one instrument would export it twice).
    views: [
      ...SECONDS.map((name) => ({ instrumentName: name, name: `${name}_seconds`, aggregationCardinalityLimit: CARDINALITY_LIMIT })),
      ...Object.values(METRIC)
        .filter((name) => !(SECONDS as string[]).includes(name))
        .map((name) => ({ instrumentName: name, aggregationCardinalityLimit: CARDINALITY_LIMIT })),
    ],
  });
  metrics.setGlobalMeterProvider(provider);
  let guard: HostGuardOptions = {};
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    try {
      checkHostAndOrigin(guard, req.headers.host ?? null, req.headers.origin ?? null);
    } catch (error) {
      return plain(res, 403, `${(error as Error).message}\n`);
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return plain(res, 405, 'method not allowed\n');
    // Collected and serialized here rather than by the exporter's handler, whose failures escape as an unhandled rejection.
    if (path === '/metrics') return void scrape(exporter, serializer, res);
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
  // On loopback, the endpoint's rule: loopback names (and --allowed-hosts, for a port-forward's name).
  // A non-loopback bind is there for a scraper, which names the pod or host by its address:
  // no Host is checked there (the network decides who reaches it; see docs/operations.md).
  if (isLoopbackHost(at.host)) guard = allowHosts(loopbackGuard(port, at.host), at.allowedHosts ?? []);
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

/** One scrape, answered 500 (never thrown) when collecting or serializing fails. */
async function scrape(exporter: PrometheusExporter, serializer: PrometheusSerializer, res: ServerResponse): Promise<void> {
  let body: string;
  try {
    body = serializer.serialize((await exporter.collect()).resourceMetrics);
  } catch (error) {
    return plain(res, 500, `# scrape failed: ${String(error)}\n`);
  }
  res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', 'cache-control': 'no-store' }).end(body);
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
