/** `mcp-continuity serve`: the example server on our endpoint. */
import { createExampleServer } from '../example/index.js';
import { listen } from '../node/listen.js';
import { createEndpoint } from '../server/endpoint.js';
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
import { listenError, preflight } from './preflight.js';
import { eventLog, type EventLog } from './event-log.js';
import { startOpsServer, type OpsServer, type OpsServerOptions } from './ops-server.js';
import { DEFAULT_STORE, parseServeOptions, type ServeOptions } from './serve-options.js';
import { serveResource, startTracing, tracesRequested, type Tracing } from './otel.js';

export { SERVE_USAGE } from './usage.js';
export { DEFAULT_STORE };

/** Parses a `--store` value: `memory` or `sqlite:PATH`. */
export function openStore(spec: string): Store {
  if (spec === 'memory') return memoryStore();
  if (spec.startsWith('sqlite:') && spec.length > 'sqlite:'.length) return sqliteStore({ path: spec.slice('sqlite:'.length) });
  throw new UsageError(
    `Unknown store ${JSON.stringify(redactUrl(spec))}: expected memory, sqlite:PATH, redis://HOST:PORT[/DB], rediss://… or redis-cluster://H1:P1,H2:P2`,
  );
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

/** How long the store gets to close at the end of a stop, ms. */
const STORE_CLOSE_MS = 150;

/** Runs `mcp-continuity serve`; resolves once listening (the process then runs until a signal). */
export async function serve(argv: string[]): Promise<void> {
  const options = parseServeOptions(argv);
  // Nothing is created (no database file) until the port is known to be free and the path usable.
  await preflight(options);
  const resource = options.metricsAt !== undefined || tracesRequested() ? await serveResource() : undefined;
  const tracing = resource && tracesRequested() ? await startTracing(resource) : undefined;
  const redis = isRedisSpec(options.store) ? await openRedisStore(options.store) : undefined;
  const store = redis?.store ?? openStore(options.store);
  const log = eventLog({ format: options.format, quiet: options.quiet });
  const endpoint = createEndpoint({
    ...log.hooks,
    modern: await modernLeg(store, log.onError),
    cluster: redis?.cluster,
    server: () => createExampleServer(),
    store,
    jsonResponse: options.json,
    upgrade: { websocket: options.websocket },
    // Errors are printed even with --quiet: a store that fails must never go unseen.
    onError: log.onError,
  });
  log.setReplica(endpoint.replicaId);
  // SIGTERM first takes the replica out of rotation (readiness fails), then closes it.
  const state = { leaving: false };
  const ops =
    options.metricsAt === undefined
      ? undefined
      : await startOps({ ...options.metricsAt, resource, allowedHosts: options.allowedHosts }, store, () => state.leaving || endpoint.draining);
  let listener: Awaited<ReturnType<typeof listen>>;
  try {
    listener = await listen(withAllowedHosts(endpoint, options.allowedHosts), { port: options.port, host: options.host, path: options.path });
  } catch (error) {
    await ops?.close();
    await store.close();
    throw listenError(error as NodeJS.ErrnoException, options.host, options.port);
  }
  guardPublicBind(endpoint, options, listener.url);
  announce(options, log, listener.url, endpoint.replicaId, ops, tracing);
  // Said at the signal, not at the end: a replica that drains for its whole window must
  // not look hung. The end line (the endpoint's drain event) says how it went.
  const leaving = (signal: NodeJS.Signals, drainMs: number): void =>
    signal === 'SIGTERM'
      ? log.log({ level: 'info', event: 'drain-start', signal, sessions: endpoint.sessionCount, drainMs: drainMs + options.unreadyMs })
      : log.log({ level: 'info', event: 'stop', signal, sessions: endpoint.sessionCount });
  stopOnSignals(state, options, leaving, async (drainMs) => {
    await listener.close({ drainMs });
    await ops?.close();
    // The last spans (the drain's own calls) leave before the process does, within a bound.
    await tracing?.shutdown();
    // A store that does not answer must not keep the process past its drain: what it
    // still owes (a quit) is dropped with the process.
    await Promise.race([store.close(), new Promise((resolve) => setTimeout(resolve, STORE_CLOSE_MS).unref())]);
  });
}

/** Starts the `--metrics` server; on failure closes the store and names the flag to fix. */
function startOps(at: OpsServerOptions, store: Store, draining: () => boolean): Promise<OpsServer> {
  return startOpsServer(at, {
    get draining() {
      return draining();
    },
    // Any read answers the question "does the store respond"; this ID names no session.
    storeReachable: () => store.sessions.get('readyz-probe'),
  }).catch(async (error: unknown) => {
    await store.close();
    const failed = listenError(error as NodeJS.ErrnoException, at.host, at.port);
    throw new StartupError(`--metrics: ${failed.message.replace(/--port|--host/g, '--metrics')}`);
  });
}

/** The endpoint as listen() sees it: the loopback guard listen() sets is extended with --allowed-hosts. */
function withAllowedHosts(endpoint: Endpoint, allowedHosts: string[]): Endpoint {
  return Object.create(endpoint, {
    defaultHostGuard: { value: (guard: Parameters<Endpoint['defaultHostGuard']>[0]) => endpoint.defaultHostGuard(allowHosts(guard, allowedHosts)) },
  }) as Endpoint;
}

/**
 * listen() guards loopback binds only; on another address --allowed-hosts turns the guard on
 * (the names listed, plus the bind address): behind a proxy, the public name.
 */
function guardPublicBind(endpoint: Endpoint, options: ServeOptions, url: URL): void {
  if (isLoopbackHost(options.host) || options.allowedHosts.length === 0) return;
  const self = url.host;
  endpoint.defaultHostGuard(allowHosts({ allowedHosts: [self], allowedOrigins: [`http://${self}`, `https://${self}`] }, options.allowedHosts));
}

/** Says where the server listens: a JSON event, the bare URL (--quiet) or the banner. The store is named without its password. */
function announce(options: ServeOptions, log: EventLog, url: URL, replicaId: string, ops: OpsServer | undefined, tracing: Tracing | undefined): void {
  const traces = tracing === undefined ? undefined : redactUrl(tracing.endpoint);
  if (options.format === 'json')
    log.log({ level: 'info', event: 'listening', url: url.href, store: redactUrl(options.store), metrics: ops?.url.href, traces }, true);
  else console.log(options.quiet ? url.href : banner(url.href, redactUrl(options.store), replicaId, ops?.url.href, traces));
}

/**
 * SIGTERM (Kubernetes, systemd, every PaaS) drains: calls in flight finish within the
 * window, idle sessions go to the other replicas at once. SIGINT (a terminal) stops now,
 * also in the middle of a drain: whoever presses Ctrl-C there chose not to wait (exit 130,
 * the shell's status for an interrupt).
 */
function stopOnSignals(
  state: { leaving: boolean },
  options: ServeOptions,
  leaving: (signal: NodeJS.Signals, drainMs: number) => void,
  close: (drainMs: number) => Promise<void>,
): void {
  const stop = async (signal: NodeJS.Signals, drain: number): Promise<void> => {
    if (state.leaving) {
      if (signal === 'SIGINT') process.exit(130);
      return;
    }
    state.leaving = true;
    leaving(signal, drain);
    if (signal === 'SIGTERM' && options.unreadyMs > 0) await new Promise((resolve) => setTimeout(resolve, options.unreadyMs));
    await close(drain);
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT', 0));
  process.on('SIGTERM', () => void stop('SIGTERM', options.drainMs));
}
