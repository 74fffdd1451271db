/**
 * The web-standard endpoint: `handle(Request) → Response` for the stateful Streamable
 * HTTP transport (2025-03-26, 2025-06-18, 2025-11-25). A router: it validates each request
 * and hands it to its session through the placement, which finds the session wherever it
 * is (here, at rest, or on another replica) behind one interface. Every refusal comes
 * from the error table.
 */
import { ContinuityError } from '../protocol/errors.js';
import { Header, SUPPORTED_PROTOCOL_VERSIONS, UPGRADE_REQUEST_HEADER, accepts, allowsBatches, isSupportedProtocolVersion, type ProtocolVersion } from '../protocol/headers.js';
import type { RequestId } from '../protocol/jsonrpc.js';
import { randomToken } from '../protocol/crypto.js';
import { memoryStore } from '../store/memory/index.js';
import type { Store } from '../store/types.js';
import { checkHostAndOrigin, type HostGuardOptions } from './host-guard.js';
import { refusal, toRefusal } from './stream/http.js';
import { resolveLimits, type EndpointOptions, type HandleContext, type ResolvedLimits } from './options.js';
import { clusterOf } from './cluster/cluster.js';
import { Placement } from './cluster/placement.js';
import type { PlacedSession } from './session/placed.js';
import { readPost } from './post-body.js';
import { initializeSession, type Initializer } from './initialize.js';
import { requestFailureReporter } from './report.js';
import { checkSubprotocol, type UpgradeDecision } from './upgrade/gate.js';
import { runOverdue } from './stream/turns.js';
import { admit } from './stream/admission.js';
import { ServerObserver } from '../telemetry/server.js';
import { observeRefusal, observeStream } from './observe.js';
import { withModernLeg } from './eras.js';

export type { UpgradeDecision } from './upgrade/gate.js';

/** A Streamable HTTP endpoint. Mount `handle` on any framework that speaks `Request`/`Response`. */
export interface Endpoint {
  /** Answers one HTTP request. Never throws: failures become refusals from the error table. */
  handle(request: Request, context?: HandleContext): Promise<Response>;
  /**
   * Stops accepting requests and closes live sessions' connections. Durable stores keep their sessions.
   *
   * With `drainMs`, a graceful stop first (a deploy): no new session is taken here (503
   * `server-draining`, retryable), idle sessions are let go at once (in a cluster their
   * leases are released, so another replica takes each on its next request), calls in
   * flight have up to `drainMs` to finish, and their sessions are let go as they do; then
   * whatever is left is abandoned. See {@link DEFAULT_DRAIN_MS}.
   */
  close(options?: CloseOptions): Promise<void>;
  /** Live sessions in this process. */
  readonly sessionCount: number;
  /**
   * Declares a session's replay log lost or damaged: the log restarts under a new epoch,
   * and every older cursor of the session is refused with `replay-epoch-mismatch` (409).
   * Throws `session-not-found` for an unknown session.
   */
  resetReplayLog(sessionId: string): Promise<void>;
  /** The store in use. */
  readonly store: Store;
  /** This replica's ID (the cluster's, or one made for this endpoint): logs and events name it. */
  readonly replicaId: string;
  /**
   * True once {@link Endpoint.close} has begun (including a drain, `close({ drainMs })`):
   * the endpoint takes no new sessions, and a readiness probe should take it out of its
   * load balancer.
   */
  readonly draining: boolean;
  /**
   * Decides a WebSocket upgrade request (the Node adapter calls it from its `upgrade`
   * event). A refusal carries the HTTP response to write; an acceptance names the
   * subprotocol and takes the socket once the 101 is written.
   */
  upgrade(request: Request, context?: HandleContext): Promise<UpgradeDecision>;
  /**
   * Installs a Host/Origin guard unless the options chose one. Adapters call this for
   * loopback binds, where DNS rebinding is the threat.
   * @internal
   */
  defaultHostGuard(guard: HostGuardOptions): void;
}

export { REQUEST_FAILURE_REPORT_MS } from './report.js';

/** Options of {@link Endpoint.close}. */
export interface CloseOptions {
  /** Time for calls in flight to finish before they are abandoned, ms (0: none). */
  drainMs?: number | undefined;
}

/**
 * A drain window that fits Kubernetes' default 30 s grace period with room for a preStop
 * delay and the process's own exit: 20 s.
 */
export const DEFAULT_DRAIN_MS = 20_000;


const RETRY_AFTER = { 'retry-after': '1' };

/** What the routes of one endpoint share. */
interface Routing {
  readonly placement: Placement;
  readonly limits: ResolvedLimits;
  readonly jsonResponse: boolean;
  readonly init: Initializer;
  readonly upgrade: { readonly websocket: boolean; readonly expiresInMs: number; readonly maxPending: number };
}

/** `answering.id`: the id of the one request a POST carries, echoed by a refusal. */
type Route = (request: Request, context: HandleContext, answering: { id: RequestId | null }) => Promise<Response>;

/**
 * The routes: each request goes to its session, wherever it is placed, through the one
 * session interface; nothing here depends on where the session runs.
 */
function routes({ placement, limits, jsonResponse, init, upgrade }: Routing) {
  /** Runs `work` on the session the request names. */
  function routed<T>(request: Request, context: HandleContext, work: (session: PlacedSession) => Promise<T>): Promise<T> {
    const id = request.headers.get(Header.SessionId);
    if (id === null || id === '') throw new ContinuityError('session-required');
    return placement.run(id, context.principal, (session) => {
      const version = request.headers.get(Header.ProtocolVersion);
      if (version !== null && !isSupportedProtocolVersion(version)) {
        throw new ContinuityError('protocol-version-unsupported', `Unsupported MCP-Protocol-Version: ${version.slice(0, 40)}`, { supported: [...SUPPORTED_PROTOCOL_VERSIONS] });
      }
      return work(session);
    });
  }

  const post: Route = async (request, context, answering) => {
    const { messages, batch, initialize } = await readPost(request, limits, jsonResponse);
    const only = messages[0];
    if (!batch && only && 'id' in only && only.id !== undefined && 'method' in only) answering.id = only.id;
    if (initialize) return initializeSession(init, initialize, request, context);
    return routed(request, context, (session) => {
      if (batch && !allowsBatches(session.record.protocolVersion as ProtocolVersion)) throw new ContinuityError('batch-unsupported');
      return session.post(messages, request, context, batch);
    });
  };

  const get: Route = async (request, context) => {
    if (!accepts(request.headers.get(Header.Accept), 'text/event-stream')) {
      throw new ContinuityError('not-acceptable', 'Not Acceptable: client must accept text/event-stream');
    }
    const cursor = request.headers.get(Header.LastEventId);
    const wantsUpgrade = upgrade.websocket && request.headers.get(UPGRADE_REQUEST_HEADER)?.toLowerCase() === 'websocket';
    return routed(request, context, (session) => {
      if (cursor !== null) return session.resume(cursor);
      return session.openStandalone(wantsUpgrade && placement.pendingUpgrades() < upgrade.maxPending ? upgrade : undefined);
    });
  };

  const del: Route = (request, context) => routed(request, context, async (session) => {
    await session.delete();
    return new Response(null, { status: 200 });
  });

  const byMethod: Record<string, Route> = { POST: post, GET: get, DELETE: del };
  const route: Route = async (request, context, answering) => {
    const handler = byMethod[request.method];
    return handler ? handler(request, context, answering) : Promise.reject(new ContinuityError('method-not-allowed'));
  };
  return { route, routed };
}

/**
 * Creates an endpoint.
 *
 * @example
 * ```ts
 * import { createEndpoint } from 'mcp-continuity/server';
 * import { listen } from 'mcp-continuity/node';
 * const endpoint = createEndpoint({ server: () => buildMyMcpServer() });
 * await listen(endpoint, { port: 3000 });
 * ```
 */
export function createEndpoint(options: EndpointOptions): Endpoint {
  const limits = resolveLimits(options.limits);
  const store = options.store ?? memoryStore({ retention: options.retention });
  const now = options.now ?? Date.now;
  const report = options.onError;
  // A throwing onError must not become an unhandled rejection that ends the process.
  const onError = (error: Error): void => {
    try {
      report?.(error);
    } catch {
      // Nowhere left to report it.
    }
  };
  const jsonResponse = options.jsonResponse ?? false;
  const keepAliveMs = options.keepAliveMs ?? 15_000;
  const cluster = clusterOf(store, options.cluster, onError);
  const observer = new ServerObserver(cluster?.replicaId ?? options.cluster?.replicaId ?? `r-${randomToken(9)}`, options);
  if (cluster) cluster.onTakeover = (session, token) => observer.takeover(session, token);
  const placement = new Placement(
    { store, limits, server: options.server, cluster, keepAliveMs, rebuildable: options.rebuildable ?? true, now, onError, observer },
    { store, limits, retryMs: options.retryMs ?? 1000, keepAliveMs, jsonResponse, now, onError },
  );
  const init = { placement, server: options.server, newSessionId: options.sessionId ?? (() => randomToken(24)), now, onError };
  const upgrade = { websocket: options.upgrade?.websocket ?? false, expiresInMs: options.upgrade?.expiresInMs ?? 10_000, maxPending: options.upgrade?.maxPending ?? 100 };
  const { route, routed } = routes({ placement, limits, jsonResponse, init, upgrade });
  const reportUnexpected = requestFailureReporter(onError, now);
  let guard: HostGuardOptions | false | undefined = options.hostGuard;
  let closed = false;
  let closing: Promise<void> | undefined;
  const checkGuard = (request: Request): void => {
    if (closed) throw new ContinuityError('endpoint-closed');
    if (guard) checkHostAndOrigin(guard, request.headers.get(Header.Host) ?? new URL(request.url).host, request.headers.get(Header.Origin));
  };

  const endpoint: Endpoint = {
    get sessionCount() {
      return placement.size;
    },
    store,
    replicaId: observer.replicaId,
    get draining() {
      return closing !== undefined;
    },
    async upgrade(request, context = {}) {
      try {
        checkGuard(request);
        if (!upgrade.websocket) throw new ContinuityError('upgrade-invalid', 'WebSocket upgrade is not enabled on this endpoint');
        checkSubprotocol(request);
        return await routed(request, context, (session) => session.handshake(request));
      } catch (error) {
        reportUnexpected(error);
        observeRefusal(observer, request, error, null);
        return { ok: false, response: toRefusal(error) };
      }
    },
    async resetReplayLog(sessionId) {
      const session = await placement.find(sessionId);
      if (!session || session.terminated) throw new ContinuityError('session-not-found');
      await session.resetLog();
    },
    defaultHostGuard(g) {
      if (guard === undefined) guard = g;
    },
    async handle(request, context = {}) {
      const turn = admit();
      if (turn) await turn;
      // Events batched earlier in this busy turn go out before this request's work.
      runOverdue();
      const answering: { id: RequestId | null } = { id: null };
      try {
        checkGuard(request);
        return observeStream(observer, request, await route(request, context, answering));
      } catch (error) {
        reportUnexpected(error);
        observeRefusal(observer, request, error, answering.id);
        // A store that cannot be reached (or an owner that does not answer) is worth a retry soon.
        if (!(error instanceof ContinuityError)) return toRefusal(error);
        return refusal(error, answering.id, error.status === 503 ? RETRY_AFTER : undefined);
      }
    },
    close(closeOptions = {}) {
      const drainMs = closeOptions.drainMs ?? 0;
      if (!(drainMs >= 0 && Number.isFinite(drainMs))) return Promise.reject(new RangeError(`drainMs must be a finite number >= 0, got ${String(drainMs)}`));
      // A second close (a second signal, the listener's own) waits for the first.
      closing ??= (async () => {
        const started = now();
        const held = placement.size;
        if (drainMs > 0) await placement.drain(drainMs);
        closed = true;
        await placement.close();
        observer.drain('completed', held, now() - started);
      })();
      return closing;
    },
  };
  return options.modern === undefined ? endpoint : withModernLeg(endpoint, options.modern, { limits, checkGuard, report: reportUnexpected });
}
