/** `mcp-continuity serve`: the example server on our endpoint. */
import { parseArgs } from 'node:util';
import { createExampleServer } from '../example/index.js';
import { listen } from '../node/listen.js';
import { DEFAULT_DRAIN_MS, createEndpoint } from '../server/endpoint.js';
import { memoryStore } from '../store/memory/index.js';
import { sqliteStore } from '../store/sqlite/index.js';
import type { Store } from '../store/types.js';
import { isRedisSpec, openRedisStore } from './store-spec.js';
import { redisServerEventBus } from '../store/redis/event-bus.js';
import { StartupError, UsageError } from './usage.js';
import { allowHosts, isLoopbackHost } from '../server/host-guard.js';
import { redactUrl } from '../store/redis/url.js';
import type { Endpoint } from '../server/endpoint.js';
import type { ModernHandler } from '../server/eras.js';
import { banner } from './banner.js';
import { checkSqlitePath, ensurePortFree, listenError } from './preflight.js';
import { LOG_FORMATS, eventLog, type LogFormat } from './event-log.js';
import { parseHostPort, startOpsServer, type OpsServer } from './ops-server.js';

export { SERVE_USAGE } from './usage.js';

/** The store `serve` uses when none is named: SQLite, the embedded default. */
export const DEFAULT_STORE = 'sqlite:./mcp-continuity.db';

/** Parses a `--store` value: `memory` or `sqlite:PATH`. */
export function openStore(spec: string): Store {
  if (spec === 'memory') return memoryStore();
  if (spec.startsWith('sqlite:') && spec.length > 'sqlite:'.length) return sqliteStore({ path: spec.slice('sqlite:'.length) });
  throw new UsageError(`Unknown store ${JSON.stringify(redactUrl(spec))}: expected memory, sqlite:PATH, redis://HOST:PORT[/DB], rediss://… or redis-cluster://H1:P1,H2:P2`);
}

/** The environment variable holding the key that seals the modern leg's `requestState` (≥ 32 bytes). */
export const REQUEST_STATE_KEY_ENV = 'MCP_CONTINUITY_REQUEST_STATE_KEY';

/**
 * The 2026-07-28 leg on the same URL, when the official SDK v2 (an optional peer) is
 * installed; without it `serve` answers the 2025-era revisions only.
 */
async function modernLeg(store: Store, onError: (error: Error) => void): Promise<ModernHandler | undefined> {
  const example = await import('../example/modern/index.js').catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    return undefined;
  });
  if (!example) return undefined;
  // Replicas on one Redis share change events, and must share the key sealing requestState
  // (a later round may reach another replica); a single process makes its own.
  const bus = store.name === 'redis' ? await redisServerEventBus(store, { onError }) : undefined;
  const key = process.env[REQUEST_STATE_KEY_ENV];
  if (key !== undefined && Buffer.byteLength(key) < 32) throw new UsageError(`${REQUEST_STATE_KEY_ENV} must be at least 32 bytes`, 'serve');
  return example.createExampleHandler({ onError, bus, requestStateKey: key });
}

/** Runs `mcp-continuity serve`; resolves once listening (the process then runs until a signal). */
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
      'allowed-hosts': { type: 'string', default: '' },
      metrics: { type: 'string' },
      'log-format': { type: 'string', default: 'text' },
      'unready-ms': { type: 'string', default: '0' },
      'drain-ms': { type: 'string', default: String(DEFAULT_DRAIN_MS) },
    },
    strict: true,
  });
  // Number('') is 0: without this an empty --port would silently pick a random port.
  if (!/^\d{1,5}$/.test(values.port) || Number(values.port) > 65535) throw new UsageError(`--port must be an integer 0-65535, got ${JSON.stringify(values.port)}`, 'serve');
  if (!/^\d{1,7}$/.test(values['drain-ms'])) throw new UsageError(`--drain-ms must be an integer number of milliseconds, got ${JSON.stringify(values['drain-ms'])}`, 'serve');
  const drainMs = Number(values['drain-ms']);
  const allowedHosts = values['allowed-hosts'].split(',').map((h) => h.trim()).filter((h) => h !== '');
  if (allowedHosts.some((h) => /[\s/@]/.test(h))) throw new UsageError(`--allowed-hosts takes host names or host:port, comma-separated; got ${JSON.stringify(values['allowed-hosts'])}`, 'serve');
  const format = values['log-format'] as LogFormat;
  if (!LOG_FORMATS.includes(format)) throw new UsageError(`--log-format takes ${LOG_FORMATS.join(' or ')}, got ${JSON.stringify(values['log-format'])}`, 'serve');
  const metricsAt = values.metrics === undefined ? undefined : parseHostPort(values.metrics);
  const unreadyMs = Number(values['unready-ms']);
  if (!/^\d{1,7}$/.test(values['unready-ms'])) throw new UsageError(`--unready-ms must be an integer number of milliseconds, got ${JSON.stringify(values['unready-ms'])}`, 'serve');
  // Nothing is created (no database file) until the port is known to be free and the path usable.
  await ensurePortFree(Number(values.port), values.host);
  if (values.store.startsWith('sqlite:') && values.store !== 'sqlite:') checkSqlitePath(values.store.slice('sqlite:'.length));
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be an integer 0-65535, got ${values.port}`);
  const redis = isRedisSpec(values.store) ? await openRedisStore(values.store) : undefined;
  const store = redis?.store ?? openStore(values.store);
  const log = eventLog({ format, quiet: values.quiet });
  const endpoint = createEndpoint({
    ...log.hooks,
    modern: await modernLeg(store, log.onError),
    cluster: redis?.cluster,
    server: () => createExampleServer(),
    store,
    jsonResponse: values.json,
    upgrade: { websocket: values.websocket },
    // Errors are printed even with --quiet: a store that fails must never go unseen.
    onError: log.onError,
  });
  log.setReplica(endpoint.replicaId);
  // SIGTERM first takes the replica out of rotation (readiness fails), then closes it.
  let leaving = false;
  let ops: OpsServer | undefined;
  if (metricsAt) {
    ops = await startOpsServer(metricsAt, {
      get draining() {
        return leaving || endpoint.draining;
      },
      // Any read answers the question "does the store respond"; this ID names no session.
      storeReachable: () => store.sessions.get('readyz-probe'),
    }).catch(async (error: unknown) => {
      await store.close();
      const failed = listenError(error as NodeJS.ErrnoException, metricsAt.host, metricsAt.port);
      throw new StartupError(`--metrics: ${failed.message.replace(/--port|--host/g, '--metrics')}`);
    });
  }
  // listen() sets the loopback guard once the port is known; this extends it with --allowed-hosts.
  const guarded: Endpoint = Object.create(endpoint, {
    defaultHostGuard: { value: (guard: Parameters<Endpoint['defaultHostGuard']>[0]) => endpoint.defaultHostGuard(allowHosts(guard, allowedHosts)) },
  }) as Endpoint;
  let listener: Awaited<ReturnType<typeof listen>>;
  try {
    listener = await listen(guarded, { port, host: values.host, path: values.path });
  } catch (error) {
    await ops?.close();
    await store.close();
    throw listenError(error as NodeJS.ErrnoException, values.host, port);
  }
  // listen() guards loopback binds only; on another address --allowed-hosts turns the guard on
  // (the names listed, plus the bind address): behind a proxy, the public name.
  if (!isLoopbackHost(values.host) && allowedHosts.length > 0) {
    const self = listener.url.host;
    endpoint.defaultHostGuard(allowHosts({ allowedHosts: [self], allowedOrigins: [`http://${self}`, `https://${self}`] }, allowedHosts));
  }
  // The store is named without its password.
  if (format === 'json') log.log({ level: 'info', event: 'listening', url: listener.url.href, store: redactUrl(values.store), metrics: ops?.url.href }, true);
  else console.log(values.quiet ? listener.url.href : banner(listener.url.href, redactUrl(values.store), endpoint.replicaId, ops?.url.href));
  // SIGTERM (Kubernetes, systemd, every PaaS) drains: calls in flight finish within the
  // window, idle sessions go to the other replicas at once. SIGINT (a terminal) stops now.
  const stop = async (drain: number): Promise<void> => {
    if (leaving) return;
    leaving = true;
    if (unreadyMs > 0) await new Promise((resolve) => setTimeout(resolve, unreadyMs));
    await listener.close({ drainMs: drain });
    await ops?.close();
    await store.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop(0));
  process.once('SIGTERM', () => void stop(drainMs));
}
