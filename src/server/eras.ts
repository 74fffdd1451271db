/**
 * Both protocol eras on one URL. The 2026-07-28 revision has no sessions and no
 * resumption; the official SDK v2 serves it with `createMcpHandler`. A request naming a
 * session at a 2025-era revision (or none) is that session's: modern clients hold no
 * sessions. Every other request is routed by the SDK's own `isLegacyRequest`: 2025-era
 * ones to our sessions, the rest to the modern handler, which owns the modern answers
 * (its validation errors included).
 *
 * Each POST body is read once, here, within `limits.maxBodyBytes` and the process-wide
 * body budget, after the Content-Type check the SDK asks hand-wired routers for. The SDK
 * classifies from the parsed value (no clone, no second read), and the value goes on to
 * whichever leg serves it. Both legs pass the endpoint's Host/Origin guard first.
 */
import { ContinuityError } from '../protocol/errors.js';
import { Header, isSupportedProtocolVersion } from '../protocol/headers.js';
import type { CloseOptions, Endpoint } from './endpoint-api.js';
import type { HandleContext } from './session/context.js';
import { setPreReadBody, type PreRead } from './post-body.js';
import { readBody, refusal, toRefusal } from './stream/http.js';
import type { BodyBudget } from './stream/body-budget.js';
import { ListenSlots, listenClientOf, releasingAtEnd, type ListenBounds } from './listen-slots.js';

/**
 * The modern leg: what `createMcpHandler(factory, { legacy: 'reject' })` returns, or any
 * handler of that shape. It sees only requests the SDK classifies as modern.
 */
export interface ModernHandler {
  fetch(request: Request, options?: ModernRequestOptions): Promise<Response>;
  close?(): Promise<void>;
}

/** What the modern handler is given with a request (the SDK's `McpHandlerRequestOptions`). */
export interface ModernRequestOptions {
  /** `HandleContext.authInfo`, passed through. */
  authInfo?: unknown;
  /** The body, already read and parsed here. */
  parsedBody?: unknown;
}

/** What the composition shares with the endpoint it wraps. */
export interface ErasShared {
  readonly limits: { readonly maxBodyBytes: number; readonly maxBodyBytesTotal: number } & ListenBounds;
  /** Where the bodies being received are counted (the endpoint's process state). */
  readonly bodies: BodyBudget;
  /** The endpoint's Host/Origin guard (and its closed state): throws a refusal. */
  readonly checkGuard: (request: Request) => void;
  /** Failures that are not the client's (reported like the endpoint's own). */
  readonly report: (error: unknown) => void;
}

/** Who sent a request the modern leg serves, as the host told the endpoint. */
export interface ModernIdentity {
  /** `HandleContext.principal`: the authenticated principal, if the host named one. */
  readonly principal?: string | undefined;
  /** `HandleContext.client`: who sent it where no principal says (the peer's address under the Node adapters). */
  readonly client?: string | undefined;
}

const identities = new WeakMap<Request, ModernIdentity>();

/**
 * The identity of a request the endpoint handed to its modern leg: the SDK gives a server
 * factory the request (`requestInfo`), not the endpoint's context, so a factory that binds
 * state to the principal (say, `requestState`) reads it here. `{}` for any other request.
 */
export function modernIdentity(request: Request | undefined): ModernIdentity {
  return (request && identities.get(request)) ?? {};
}

interface Classifier {
  isLegacyRequest: (request: Request, parsedBody?: unknown) => Promise<boolean>;
  isJsonContentType: (header: string | null | undefined) => boolean;
}

let sdk: Promise<Classifier> | undefined;
/** The SDK v2 is an optional peer: loaded when an endpoint first routes with it. */
function classifier(): Promise<Classifier> {
  sdk ??= import('@modelcontextprotocol/server');
  return sdk;
}

/**
 * `legacy` (our sessionful endpoint) and `modern` on one URL. `createEndpoint` does this
 * when given `modern`; the endpoint's WebSocket upgrade stays 2025-era only.
 */
export function withModernLeg(legacy: Endpoint, modern: ModernHandler, shared: ErasShared): Endpoint {
  const composed: Endpoint = Object.create(legacy, {
    handle: { value: handle },
    close: { value: close },
  }) as Endpoint;
  let closing: Promise<void> | undefined;
  const listens = new ListenSlots(shared.limits);

  async function handle(request: Request, context: HandleContext = {}): Promise<Response> {
    // Header check first: a request naming a session (every 2025-era request after
    // initialize) at a 2025-era revision, or at none, belongs to that session. Only
    // session-less requests pay for the SDK's classification (tens of µs each).
    const version = request.headers.get(Header.ProtocolVersion);
    if (request.headers.has(Header.SessionId) && (version === null || isSupportedProtocolVersion(version))) return legacy.handle(request, context);
    let parsed: PreRead | undefined;
    try {
      shared.checkGuard(request);
      const { isLegacyRequest, isJsonContentType } = await classifier();
      if (request.method === 'POST') {
        if (!isJsonContentType(request.headers.get(Header.ContentType))) throw new ContinuityError('unsupported-media-type');
        parsed = parse(await readBody(request, shared.limits.maxBodyBytes, shared.limits.maxBodyBytesTotal, shared.bodies));
      }
      // A body that is not JSON carries no envelope claim: the SDK routes it to legacy
      // serving, whose answer (a parse error) is ours.
      const isLegacy = parsed === 'invalid' || (await isLegacyRequest(request, parsed?.json));
      if (isLegacy) {
        if (parsed !== undefined) setPreReadBody(request, parsed);
        return await legacy.handle(request, context);
      }
      const options: ModernRequestOptions = {};
      if (parsed !== undefined && parsed !== 'invalid') options.parsedBody = parsed.json;
      if (context.authInfo !== undefined) options.authInfo = context.authInfo;
      identities.set(request, { principal: context.principal, client: context.client });
      const listen = listenId(parsed);
      if (listen === undefined) return await modern.fetch(request, options);
      return await listening(request, options, listen.id, listenClientOf(context));
    } catch (error) {
      if (!(error instanceof ContinuityError) || error.status >= 500) shared.report(error);
      return error instanceof ContinuityError ? refusal(error) : toRefusal(error);
    }
  }

  /** A `subscriptions/listen`, served only within its client's share and the process's bound. */
  async function listening(request: Request, options: ModernRequestOptions, id: string | number | null, client: string): Promise<Response> {
    let release: () => void;
    try {
      release = listens.take(client);
    } catch (error) {
      if (error instanceof ContinuityError) return refusal(error, id);
      throw error;
    }
    try {
      return releasingAtEnd(await modern.fetch(request, options), release);
    } catch (error) {
      release();
      throw error;
    }
  }

  function close(options?: CloseOptions): Promise<void> {
    closing ??= (async () => {
      try {
        await modern.close?.();
      } finally {
        // A drain (`drainMs`) is the sessions' business: the 2025-era leg keeps serving its calls.
        await legacy.close(options);
      }
    })();
    return closing;
  }

  return composed;
}

/** The request id of a `subscriptions/listen` body; undefined for anything else. */
function listenId(parsed: PreRead | undefined): { id: string | number | null } | undefined {
  if (parsed === undefined || parsed === 'invalid') return undefined;
  const message = parsed.json as { method?: unknown; id?: unknown } | null;
  if (typeof message !== 'object' || message === null || message.method !== 'subscriptions/listen') return undefined;
  return { id: typeof message.id === 'string' || typeof message.id === 'number' ? message.id : null };
}

function parse(text: string): PreRead {
  try {
    return { json: JSON.parse(text) as unknown };
  } catch {
    return 'invalid';
  }
}
