/**
 * The web-standard endpoint: `handle(Request) → Response` for the stateful Streamable
 * HTTP transport (2025-03-26, 2025-06-18, 2025-11-25). It validates each request, asks the
 * placement where its session is, and hands it over; every refusal comes from the error table.
 */
import { ContinuityError } from '../protocol/errors.js';
import {
  Header, LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS, UPGRADE_REQUEST_HEADER, accepts, allowsBatches, isSupportedProtocolVersion, type ProtocolVersion,
} from '../protocol/headers.js';
import type { JsonRpcRequest, RequestId } from '../protocol/jsonrpc.js';
import { randomToken } from '../protocol/crypto.js';
import { memoryStore } from '../store/memory/index.js';
import type { SessionRecord, Store } from '../store/types.js';
import { checkHostAndOrigin, type HostGuardOptions } from './host-guard.js';
import { refusal, toRefusal } from './stream/http.js';
import { resolveLimits, type EndpointOptions, type HandleContext } from './options.js';
import { clusterOf } from './cluster/cluster.js';
import { Placement, type Placed } from './cluster/placement.js';
import { RemoteSession } from './cluster/remote-session.js';
import { isFenced } from './session/post.js';
import { readPost } from './post-body.js';
import { checkSubprotocol, decideHandshake, proceedOrRefuse, type UpgradeDecision } from './upgrade/gate.js';
import { runOverdue } from './stream/turns.js';
import { admit } from './stream/admission.js';

export type { UpgradeDecision } from './upgrade/gate.js';

/** A Streamable HTTP endpoint. Mount `handle` on any framework that speaks `Request`/`Response`. */
export interface Endpoint {
  /** Answers one HTTP request. Never throws: failures become refusals from the error table. */
  handle(request: Request, context?: HandleContext): Promise<Response>;
  /** Stops accepting requests and closes live sessions' connections. Durable stores keep their sessions. */
  close(): Promise<void>;
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

const VISIBLE_ASCII = /^[\x21-\x7e]+$/;
/** How many times one request may find its session moved (owner gone, or fenced here) before it gets a 503. */
const MAX_PLACEMENTS = 3;
const RETRY_AFTER = { 'retry-after': '1' };

/** A kind of failure met while answering requests (a store that cannot be read) is reported at most this often, ms. */
export const REQUEST_FAILURE_REPORT_MS = 10_000;

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
  const newSessionId = options.sessionId ?? (() => randomToken(24));
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
  let guard: HostGuardOptions | false | undefined = options.hostGuard;
  const upgrade = {
    websocket: options.upgrade?.websocket ?? false,
    expiresInMs: options.upgrade?.expiresInMs ?? 10_000,
    maxPending: options.upgrade?.maxPending ?? 100,
  };
  const keepAliveMs = options.keepAliveMs ?? 15_000;
  const cluster = clusterOf(store, options.cluster, onError);
  const placement = new Placement(
    { store, limits, server: options.server, cluster, keepAliveMs, now, onError },
    { store, limits, retryMs: options.retryMs ?? 1000, keepAliveMs, jsonResponse, now, onError },
  );
  let closed = false;

  async function lookup(request: Request, context: HandleContext): Promise<Placed> {
    const id = request.headers.get(Header.SessionId);
    if (id === null || id === '') throw new ContinuityError('session-required');
    const session = await placement.find(id);
    // A session bound to a principal is invisible to anyone else: same answer as unknown.
    if (!session || session.terminated || session.record.principal !== context.principal) {
      throw new ContinuityError('session-not-found');
    }
    const version = request.headers.get(Header.ProtocolVersion);
    if (version !== null && !isSupportedProtocolVersion(version)) {
      throw new ContinuityError('protocol-version-unsupported', `Unsupported MCP-Protocol-Version: ${version.slice(0, 40)}`, {
        supported: [...SUPPORTED_PROTOCOL_VERSIONS],
      });
    }
    return session;
  }

  async function initialize(message: JsonRpcRequest, request: Request, context: HandleContext): Promise<Response> {
    const id = newSessionId();
    if (!VISIBLE_ASCII.test(id) || id.length < 16) {
      throw new ContinuityError('internal-error', 'sessionId() must return visible ASCII of at least 16 characters');
    }
    const requested = message.params?.protocolVersion;
    // Keep the SDK inside the revisions this transport implements: one it would
    // otherwise pick (say, a stateless 2026 revision) is offered our latest instead.
    const version: ProtocolVersion = typeof requested === 'string' && isSupportedProtocolVersion(requested) ? requested : LATEST_PROTOCOL_VERSION;
    const init: JsonRpcRequest = requested === version ? message : { ...message, params: { ...message.params, protocolVersion: version } };
    const at = now();
    const record: SessionRecord = {
      id, epoch: randomToken(12), pastEpochs: [], protocolVersion: version, initialize: JSON.stringify(init),
      principal: context.principal, createdAt: at, lastActiveAt: at,
    };
    const session = await placement.create(record);
    try {
      await session.start(await options.server({ sessionId: id, rehydrating: false }), init);
    } catch (error) {
      await session.terminate().catch(onError);
      throw error;
    }
    return session.post([init], request, context, false);
  }

  /** `answering.id`: the id of the one request this POST carries, echoed by a refusal. */
  async function post(request: Request, context: HandleContext, answering: { id: RequestId | null }): Promise<Response> {
    const { messages, batch, initialize: init } = await readPost(request, limits, jsonResponse);
    const only = messages[0];
    if (!batch && only && 'id' in only && only.id !== undefined && 'method' in only) answering.id = only.id;
    if (init) return initialize(init, request, context);
    // A session can move between lookups in a cluster (its owner died, or this replica was
    // fenced off): then it is placed again, a bounded number of times.
    for (let attempt = 1; ; attempt++) {
      const session = await lookup(request, context);
      const last = attempt >= MAX_PLACEMENTS;
      if (!(session instanceof RemoteSession)) proceedOrRefuse(await session.upgradeInput('post'));
      if (batch && !allowsBatches(session.record.protocolVersion as ProtocolVersion)) throw new ContinuityError('batch-unsupported');
      if (session instanceof RemoteSession) {
        const response = await session.post(messages, request, context, batch);
        if (response) return response;
        if (last) throw new ContinuityError('store-unavailable', 'The replica owning this session does not answer');
        continue;
      }
      try {
        return await session.post(messages, request, context, batch);
      } catch (error) {
        if (last || !isFenced(error)) throw error;
        await placement.lost(session);
      }
    }
  }

  async function get(request: Request, context: HandleContext): Promise<Response> {
    if (!accepts(request.headers.get(Header.Accept), 'text/event-stream')) {
      throw new ContinuityError('not-acceptable', 'Not Acceptable: client must accept text/event-stream');
    }
    const session = await lookup(request, context);
    const cursor = request.headers.get(Header.LastEventId);
    if (session instanceof RemoteSession) return cursor === null ? session.openStandalone() : session.resume(cursor);
    if (cursor !== null) {
      proceedOrRefuse(await session.upgradeInput('resume'));
      return session.resume(cursor);
    }
    const wantsUpgrade = upgrade.websocket && request.headers.get(UPGRADE_REQUEST_HEADER)?.toLowerCase() === 'websocket';
    if (wantsUpgrade && session.canOfferUpgrade && pendingUpgrades() < upgrade.maxPending) {
      const action = await session.upgradeInput('offer');
      if (action === 'offer') return session.offerUpgrade(upgrade.expiresInMs);
      proceedOrRefuse(action);
    }
    proceedOrRefuse(await session.upgradeInput('standalone'));
    return session.openStandalone();
  }

  function pendingUpgrades(): number {
    let n = 0;
    for (const s of placement.sessions()) if (s.upgradeState === 'upgrade-pending') n++;
    return n;
  }

  async function del(request: Request, context: HandleContext): Promise<Response> {
    for (let attempt = 1; ; attempt++) {
      const session = await lookup(request, context);
      if (!(session instanceof RemoteSession)) await session.terminate();
      else if (!(await session.delete())) {
        if (attempt >= MAX_PLACEMENTS) throw new ContinuityError('store-unavailable', 'The replica owning this session does not answer');
        continue;
      }
      return new Response(null, { status: 200 });
    }
  }

  function checkGuard(request: Request): void {
    if (closed) throw new ContinuityError('endpoint-closed');
    if (guard) checkHostAndOrigin(guard, request.headers.get(Header.Host) ?? new URL(request.url).host, request.headers.get(Header.Origin));
  }

  /** When each kind of failure met while answering a request was last reported. */
  const reportedAt = new Map<string, number>();
  function reportUnexpected(error: unknown): void {
    if (!(error instanceof ContinuityError)) return onError(error instanceof Error ? error : new Error(String(error)));
    // A store that fails a request's own reads (a lookup, a session record) leaves no other
    // trace than the client's 503: reported too, once a while per kind, so that an outage
    // is seen, and is not a flood of one report per request.
    if (error.code !== 'store-unavailable' && error.code !== 'internal-error') return;
    const at = now();
    const last = reportedAt.get(error.code);
    if (last !== undefined && at - last < REQUEST_FAILURE_REPORT_MS) return;
    reportedAt.set(error.code, at);
    onError(error);
  }

  return {
    get sessionCount() {
      return placement.size;
    },
    store,
    async upgrade(request, context = {}) {
      try {
        checkGuard(request);
        if (!upgrade.websocket) throw new ContinuityError('upgrade-invalid', 'WebSocket upgrade is not enabled on this endpoint');
        checkSubprotocol(request);
        const session = await lookup(request, context);
        if (session instanceof RemoteSession) throw new ContinuityError('upgrade-invalid', 'The session is owned by another replica');
        return await decideHandshake(session, request);
      } catch (error) {
        reportUnexpected(error);
        return { ok: false, response: toRefusal(error) };
      }
    },
    async resetReplayLog(sessionId) {
      const session = await placement.find(sessionId);
      if (!session || session.terminated) throw new ContinuityError('session-not-found');
      if (session instanceof RemoteSession) throw new ContinuityError('store-fenced', 'The session is owned by another replica; reset it there');
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
        switch (request.method) {
          case 'POST':
            return await post(request, context, answering);
          case 'GET':
            return await get(request, context);
          case 'DELETE':
            return await del(request, context);
          default:
            return refusal(new ContinuityError('method-not-allowed'));
        }
      } catch (error) {
        reportUnexpected(error);
        // A store that cannot be reached (or an owner that does not answer) is worth a retry soon.
        if (!(error instanceof ContinuityError)) return toRefusal(error);
        return refusal(error, answering.id, error.status === 503 ? RETRY_AFTER : undefined);
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      await placement.close();
    },
  };
}
