/**
 * The web-standard endpoint: `handle(Request) → Response` for the stateful Streamable
 * HTTP transport (2025-03-26, 2025-06-18, 2025-11-25). A router: it validates each request
 * and hands it to its session through the placement, which finds the session wherever it
 * is (here, at rest, or on another replica) behind one interface. Every refusal comes
 * from the error table.
 */
import { ContinuityError, isContinuityError } from '../protocol/errors.js';
import {
  Header,
  SUPPORTED_PROTOCOL_VERSIONS,
  UPGRADE_REQUEST_HEADER,
  accepts,
  allowsBatches,
  isSupportedProtocolVersion,
  type ProtocolVersion,
} from '../protocol/headers.js';
import type { RequestId } from '../protocol/jsonrpc.js';
import { randomToken } from '../protocol/crypto.js';
import { memoryStore } from '../store/memory/index.js';
import { EndpointLifecycle } from './lifecycle.js';
import { refusal, toRefusal } from './stream/http.js';
import { resolveEndpointOptions, type EndpointOptions, type HandleContext, type ResolvedLimits, type ResolvedUpgrade } from './options.js';
import { clusterOf } from './cluster/cluster.js';
import { Placement } from './cluster/placement.js';
import type { PlacedSession } from './session/placed.js';
import { readPost } from './post-body.js';
import type { BodyBudget } from './stream/body-budget.js';
import { initializeSession, type Initializer } from './initialize.js';
import { requestFailureReporter } from './report.js';
import { checkSubprotocol } from './upgrade/gate.js';
import type { Endpoint } from './endpoint-api.js';
import { ServerObserver } from '../telemetry/server.js';
import { observeRefusal, observeStream } from './observe.js';
import { withModernLeg } from './eras.js';
import { checkSeen } from './session/seen.js';
import type { Store } from '../store/types.js';

export type { UpgradeDecision } from './upgrade/gate.js';

export { DEFAULT_DRAIN_MS, DEFAULT_RELEASE_MS, type CloseOptions, type Endpoint } from './endpoint-api.js';
export { REQUEST_FAILURE_REPORT_MS } from './report.js';

const RETRY_AFTER = { 'retry-after': '1' };

/** What the routes of one endpoint share. */
interface Routing {
  readonly placement: Placement;
  readonly limits: ResolvedLimits;
  readonly jsonResponse: boolean;
  readonly init: Initializer;
  readonly upgrade: ResolvedUpgrade;
  readonly bodies: BodyBudget;
  /** The store, when it can go back in time (durable or shared): what the client saw is checked against it. */
  readonly regresses: Store | undefined;
  readonly onError: (error: Error) => void;
}

/** `answering.id`: the id of the one request a POST carries, echoed by a refusal. */
type Route = (request: Request, context: HandleContext, answering: { id: RequestId | null }) => Promise<Response>;

/**
 * The routes: each request goes to its session, wherever it is placed, through the one
 * session interface; nothing here depends on where the session runs.
 */
function routes({ placement, limits, jsonResponse, init, upgrade, bodies, regresses, onError }: Routing) {
  /** Runs `work` on the session the request names. */
  function routed<T>(request: Request, context: HandleContext, work: (session: PlacedSession) => Promise<T>): Promise<T> {
    const id = request.headers.get(Header.SessionId);
    if (id === null || id === '') throw new ContinuityError('session-required');
    return placement.run(id, context.principal, async (session) => {
      const version = request.headers.get(Header.ProtocolVersion);
      if (version !== null && !isSupportedProtocolVersion(version)) {
        throw new ContinuityError('protocol-version-unsupported', `Unsupported MCP-Protocol-Version: ${version.slice(0, 40)}`, {
          supported: [...SUPPORTED_PROTOCOL_VERSIONS],
        });
      }
      const seen = request.headers.get(Header.Seen);
      if (regresses && seen !== null) await regressed(session, seen);
      return work(session);
    });
  }

  /** Ends the session, wherever it runs, when the store lacks what its client saw; then refuses with `store-regressed`. */
  async function regressed(session: PlacedSession, seen: string): Promise<void> {
    try {
      await checkSeen((regresses as Store).log, session.sessionId, session.epoch, seen, limits.maxStreamsPerSession);
    } catch (error) {
      if (isContinuityError(error, 'store-regressed')) await session.delete().catch(onError);
      throw error;
    }
  }

  const post: Route = async (request, context, answering) => {
    const { messages, batch, initialize } = await readPost(request, limits, jsonResponse, bodies);
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

  const del: Route = (request, context) =>
    routed(request, context, async (session) => {
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
  const { resolved, store, observer, placement } = assemble(options);
  const { limits, upgrade, process } = resolved;
  const init = { placement, server: options.server, newSessionId: resolved.newSessionId, now: resolved.now, onError: resolved.onError };
  const regresses = store.durable || store.shared === true ? store : undefined;
  const routing = { placement, limits, jsonResponse: resolved.jsonResponse, init, upgrade, bodies: process.bodies, regresses, onError: resolved.onError };
  const { route, routed } = routes(routing);
  const reportUnexpected = requestFailureReporter(resolved.onError, resolved.now);
  const life = new EndpointLifecycle(options.hostGuard, placement, observer, resolved.now);
  const endpoint: Endpoint = {
    get sessionCount() {
      return placement.size;
    },
    store,
    replicaId: observer.replicaId,
    get draining() {
      return life.draining;
    },
    async upgrade(request, context = {}) {
      try {
        life.check(request);
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
    defaultHostGuard: (guard) => life.defaultHostGuard(guard),
    async handle(request, context = {}) {
      const turn = process.admission.admit();
      if (turn) await turn;
      // Events batched earlier in this busy turn go out before this request's work.
      process.turns.runOverdue();
      const answering: { id: RequestId | null } = { id: null };
      try {
        life.check(request);
        return observeStream(observer, request, await route(request, context, answering));
      } catch (error) {
        reportUnexpected(error);
        observeRefusal(observer, request, error, answering.id);
        // A store that cannot be reached (or an owner that does not answer) is worth a retry soon.
        if (!(error instanceof ContinuityError)) return toRefusal(error);
        return refusal(error, answering.id, error.status === 503 ? RETRY_AFTER : undefined);
      }
    },
    close: (closeOptions) => life.close(closeOptions),
  };
  return options.modern === undefined
    ? endpoint
    : withModernLeg(endpoint, options.modern, { limits, bodies: process.bodies, checkGuard: life.check, report: reportUnexpected });
}

/** The parts an endpoint is made of: its resolved options, store, cluster membership, observer and placement. */
function assemble(options: EndpointOptions) {
  const resolved = resolveEndpointOptions(options);
  const { limits, keepAliveMs, now, onError } = resolved;
  const store = options.store ?? memoryStore({ retention: options.retention });
  const cluster = clusterOf(store, options.cluster, onError);
  const observer = new ServerObserver(cluster?.replicaId ?? options.cluster?.replicaId ?? `r-${randomToken(9)}`, options);
  if (cluster) cluster.onTakeover = (session, token) => observer.takeover(session, token);
  const placement = new Placement(
    { store, limits, server: options.server, cluster, keepAliveMs, rebuildable: resolved.rebuildable, now, onError, observer },
    { store, limits, retryMs: resolved.retryMs, keepAliveMs, jsonResponse: resolved.jsonResponse, process: resolved.process, now, onError },
  );
  return { resolved, store, observer, placement };
}
