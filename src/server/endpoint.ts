/**
 * The web-standard endpoint: `handle(Request) → Response` for the stateful Streamable
 * HTTP transport (2025-03-26, 2025-06-18, 2025-11-25). It validates each request, finds
 * or creates its session, and hands it over; every refusal comes from the error table.
 */
import { ContinuityError } from '../protocol/errors.js';
import {
  Header, LATEST_PROTOCOL_VERSION, UPGRADE_REQUEST_HEADER, UPGRADE_TOKEN_HEADER, WS_SUBPROTOCOL, accepts, allowsBatches, isSupportedProtocolVersion, type ProtocolVersion,
} from '../protocol/headers.js';
import { classify, type JsonRpcMessage, type JsonRpcRequest } from '../protocol/jsonrpc.js';
import { randomToken } from '../protocol/crypto.js';
import { memoryStore } from '../store/memory.js';
import type { SessionRecord, Store } from '../store/types.js';
import { checkHostAndOrigin, type HostGuardOptions } from './host-guard.js';
import { readBody, refusal, toRefusal } from './http.js';
import { resolveLimits, type EndpointOptions, type HandleContext } from './options.js';
import type { SocketPort } from './event-sink.js';
import { Session, type SessionDeps } from './session.js';
import type { UpgradeAction } from './upgrade-state.js';

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

/** What to do with a WebSocket upgrade request. */
export type UpgradeDecision =
  | { readonly ok: false; readonly response: Response }
  | { readonly ok: true; readonly protocol: string; attach(port: SocketPort): Promise<void> };


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
  let guard: HostGuardOptions | false | undefined = options.hostGuard;
  const upgrade = {
    websocket: options.upgrade?.websocket ?? false,
    expiresInMs: options.upgrade?.expiresInMs ?? 10_000,
    maxPending: options.upgrade?.maxPending ?? 100,
  };
  const sessions = new Map<string, Session>();
  /** Rehydrations under way, so concurrent requests for one session share one. */
  const rehydrating = new Map<string, Promise<Session | undefined>>();
  let closed = false;

  const deps: SessionDeps = {
    store,
    limits,
    retryMs: options.retryMs ?? 1000,
    keepAliveMs: options.keepAliveMs ?? 15_000,
    jsonResponse: options.jsonResponse ?? false,
    now,
    onError,
    onEnd: (session) => {
      if (sessions.get(session.sessionId) === session) sessions.delete(session.sessionId);
    },
  };

  const sweep = setInterval(() => {
    const cutoff = now() - limits.sessionIdleMs;
    for (const s of sessions.values()) {
      if (!s.hasReader && s.record.lastActiveAt < cutoff) void s.terminate().catch(onError);
    }
    // Sessions a durable store kept from earlier processes expire the same way.
    if (store.durable) void expireStored(cutoff).catch(onError);
  }, Math.min(limits.sessionIdleMs / 2, 60_000));

  async function expireStored(cutoff: number): Promise<void> {
    for (const id of await store.sessions.idleSince(cutoff, 100)) {
      if (sessions.has(id) || rehydrating.has(id)) continue;
      await store.sessions.delete(id);
      await store.log.dropSession(id);
    }
  }
  sweep.unref?.();

  async function lookup(request: Request, context: HandleContext): Promise<Session> {
    const id = request.headers.get(Header.SessionId);
    if (id === null || id === '') throw new ContinuityError('session-required');
    const session = sessions.get(id) ?? (await rehydrate(id));
    // A session bound to a principal is invisible to anyone else: same answer as unknown.
    if (!session || session.terminated || session.record.principal !== context.principal) {
      throw new ContinuityError('session-not-found');
    }
    const version = request.headers.get(Header.ProtocolVersion);
    if (version !== null && !isSupportedProtocolVersion(version)) {
      throw new ContinuityError('protocol-version-unsupported', `Unsupported MCP-Protocol-Version: ${version.slice(0, 40)}`, {
        supported: ['2025-03-26', '2025-06-18', '2025-11-25'],
      });
    }
    return session;
  }

  /** A session this process does not hold, rebuilt from a durable store; undefined if unknown. */
  function rehydrate(id: string): Promise<Session | undefined> {
    if (!store.durable || !VISIBLE_ASCII.test(id) || id.length > 256) return Promise.resolve(undefined);
    let pending = rehydrating.get(id);
    if (!pending) {
      pending = (async () => {
        const record = await store.sessions.get(id);
        if (!record) return undefined;
        if (sessions.size >= limits.maxSessions) throw new ContinuityError('session-limit');
        const session = new Session(record, deps);
        try {
          await session.rehydrate(await options.server({ sessionId: id, rehydrating: true }));
        } catch (error) {
          if (error instanceof ContinuityError && error.code === 'session-superseded') await session.terminate().catch(onError);
          else await session.shutdown().catch(onError);
          throw error;
        }
        sessions.set(id, session);
        return session;
      })().finally(() => rehydrating.delete(id));
      rehydrating.set(id, pending);
    }
    return pending;
  }

  async function initialize(message: JsonRpcRequest, request: Request, context: HandleContext): Promise<Response> {
    if (sessions.size >= limits.maxSessions) throw new ContinuityError('session-limit');
    const id = newSessionId();
    if (!VISIBLE_ASCII.test(id) || id.length < 16) throw new Error('sessionId() must return visible ASCII of at least 16 characters');
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
    await store.sessions.create(record);
    const session = new Session(record, deps);
    sessions.set(id, session);
    try {
      await session.start(await options.server({ sessionId: id, rehydrating: false }), init);
    } catch (error) {
      await session.terminate().catch(onError);
      throw error;
    }
    return session.post([init], request, context, false);
  }

  async function post(request: Request, context: HandleContext): Promise<Response> {
    const accept = request.headers.get(Header.Accept);
    if (!accepts(accept, 'application/json') || (!deps.jsonResponse && !accepts(accept, 'text/event-stream'))) {
      throw new ContinuityError('not-acceptable', 'Not Acceptable: client must accept both application/json and text/event-stream');
    }
    const type = request.headers.get(Header.ContentType);
    if (!type || type.split(';')[0]?.trim().toLowerCase() !== 'application/json') throw new ContinuityError('unsupported-media-type');
    const text = await readBody(request, limits.maxBodyBytes);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new ContinuityError('parse-error');
    }
    const batch = Array.isArray(body);
    const messages = (batch ? body : [body]) as JsonRpcMessage[];
    if (messages.length === 0) throw new ContinuityError('invalid-request', 'Invalid Request: empty batch');
    for (const m of messages) classify(m);
    const init = messages.find((m): m is JsonRpcRequest => 'method' in m && m.method === 'initialize' && 'id' in m);
    if (init) {
      if (batch) throw new ContinuityError('invalid-request', 'Invalid Request: initialize must not be part of a batch');
      return initialize(init, request, context);
    }
    const session = await lookup(request, context);
    proceedOrRefuse(await session.upgradeInput('post'));
    if (batch && !allowsBatches(session.record.protocolVersion as ProtocolVersion)) throw new ContinuityError('batch-unsupported');
    return session.post(messages, request, context, batch);
  }

  async function get(request: Request, context: HandleContext): Promise<Response> {
    if (!accepts(request.headers.get(Header.Accept), 'text/event-stream')) {
      throw new ContinuityError('not-acceptable', 'Not Acceptable: client must accept text/event-stream');
    }
    const session = await lookup(request, context);
    const cursor = request.headers.get(Header.LastEventId);
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
    for (const s of sessions.values()) if (s.upgradeState === 'upgrade-pending') n++;
    return n;
  }

  /** Turns an upgrade action into a refusal, or returns for `proceed`. */
  function proceedOrRefuse(action: UpgradeAction): void {
    if (action === 'proceed') return;
    if (action === 'refuse-pending') throw new ContinuityError('upgrade-pending');
    throw new ContinuityError('session-superseded');
  }

  async function upgradeRequest(request: Request, context: HandleContext): Promise<UpgradeDecision> {
    if (closed) throw new ContinuityError('endpoint-closed');
    if (guard) checkHostAndOrigin(guard, request.headers.get(Header.Host) ?? new URL(request.url).host, request.headers.get(Header.Origin));
    if (!upgrade.websocket) throw new ContinuityError('upgrade-invalid', 'WebSocket upgrade is not enabled on this endpoint');
    const protocols = (request.headers.get('sec-websocket-protocol') ?? '').split(',').map((p) => p.trim());
    if (!protocols.includes(WS_SUBPROTOCOL)) throw new ContinuityError('upgrade-invalid', `Sec-WebSocket-Protocol must offer ${WS_SUBPROTOCOL}`);
    const session = await lookup(request, context);
    const input = session.handshakeInput(request.headers.get(UPGRADE_TOKEN_HEADER));
    if (input !== 'handshake' || session.upgradeState !== 'upgrade-pending') {
      // A wrong or expired token, a second handshake, or one without an offer: the session ends.
      proceedOrRefuse(await session.upgradeInput(input));
    }
    return {
      ok: true,
      protocol: WS_SUBPROTOCOL,
      async attach(port) {
        // The 101 is written: this is the moment the session moves (or, for a second
        // socket racing the first, is superseded and both sockets close).
        const action = await session.upgradeInput('handshake');
        if (action === 'accept') session.adoptSocket(port);
        else port.close(1008, 'session-superseded');
      },
    };
  }

  async function del(request: Request, context: HandleContext): Promise<Response> {
    const session = await lookup(request, context);
    await session.terminate();
    return new Response(null, { status: 200 });
  }

  return {
    get sessionCount() {
      return sessions.size;
    },
    store,
    async upgrade(request, context = {}) {
      try {
        return await upgradeRequest(request, context);
      } catch (error) {
        if (!(error instanceof ContinuityError)) onError(error instanceof Error ? error : new Error(String(error)));
        return { ok: false, response: toRefusal(error) };
      }
    },
    async resetReplayLog(sessionId) {
      const session = sessions.get(sessionId);
      if (!session) throw new ContinuityError('session-not-found');
      await session.resetLog();
    },
    defaultHostGuard(g) {
      if (guard === undefined) guard = g;
    },
    async handle(request, context = {}) {
      try {
        if (closed) throw new ContinuityError('endpoint-closed');
        if (guard) checkHostAndOrigin(guard, request.headers.get(Header.Host) ?? new URL(request.url).host, request.headers.get(Header.Origin));
        switch (request.method) {
          case 'POST':
            return await post(request, context);
          case 'GET':
            return await get(request, context);
          case 'DELETE':
            return await del(request, context);
          default:
            return refusal(new ContinuityError('method-not-allowed'));
        }
      } catch (error) {
        if (!(error instanceof ContinuityError)) onError(error instanceof Error ? error : new Error(String(error)));
        return toRefusal(error);
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(sweep);
      await Promise.all([...sessions.values()].map((s) => (store.durable ? s.shutdown() : s.terminate()).catch(onError)));
      sessions.clear();
    },
  };
}
