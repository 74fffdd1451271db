/**
 * `mcp-continuity/fastify`: the endpoint as a Fastify plugin. Fastify's own JSON parser
 * reads the body (its body limit and parser settings apply); other content types reach
 * the endpoint as text, so it answers them with its own coded refusals. Replies are
 * hijacked and streamed with backpressure; `fastify.close()` closes the endpoint first
 * (a `preClose` hook), which ends every stream, so the server can then close.
 *
 * Needs no Fastify types: the plugin is typed by the few members it uses.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { serveNode, writeResponse } from '../node/index.js';
import { contextOf } from '../node/identity.js';
import { ContinuityError, type ErrorCode } from '../protocol/index.js';
import type { Endpoint } from '../server/index.js';
import { refusal } from '../server/stream/http.js';
import { parsedBodyText } from './body.js';

/** The parts of a Fastify request the plugin reads. */
export interface FastifyRequestLike {
  readonly raw: IncomingMessage;
  readonly body?: unknown;
}

/** The parts of a Fastify reply the plugin uses. */
export interface FastifyReplyLike {
  readonly raw: ServerResponse;
  hijack(): unknown;
}

type Done = (error: Error | null, body?: unknown) => void;

/** The parts of a Fastify instance the plugin uses. */
export interface FastifyInstanceLike {
  route(options: { method: string[]; url: string; handler: (request: FastifyRequestLike, reply: FastifyReplyLike) => Promise<void> }): unknown;
  addHook(name: 'preClose', hook: () => Promise<void>): unknown;
  addContentTypeParser(type: string, parser: (request: FastifyRequestLike, payload: IncomingMessage, done: Done) => void): unknown;
  removeAllContentTypeParsers(): unknown;
  setErrorHandler(handler: (error: { code?: string; statusCode?: number }, request: FastifyRequestLike, reply: FastifyReplyLike) => unknown): unknown;
}

/** Options of {@link mcpFastify}. */
export interface McpFastifyOptions {
  /** The route (default `/mcp`). */
  path?: string | undefined;
  /**
   * The principal a session is bound to, from the raw request (say, from a verified
   * token). A session ID presented under another principal is answered exactly like an
   * unknown session (404).
   */
  principal?: ((req: IncomingMessage) => string | undefined | Promise<string | undefined>) | undefined;
  /** What the SDK server's handlers see as `extra.authInfo`. */
  authInfo?: ((req: IncomingMessage) => unknown) | undefined;
  /** On close, how long streams may take to send their last bytes before their sockets are destroyed, ms (default 2,000). */
  closeGraceMs?: number | undefined;
}

/** Fastify's body errors, as the endpoint's own refusals. */
const BODY_ERRORS: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'body-too-large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported-media-type',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'parse-error',
  FST_ERR_CTP_INVALID_JSON_BODY: 'parse-error',
};

/**
 * A Fastify plugin serving `endpoint` on one route (GET, POST, DELETE).
 *
 * @example
 * ```ts
 * const app = Fastify();
 * await app.register(mcpFastify(endpoint));
 * await app.listen({ port: 3000 });
 * app.server.on('upgrade', upgradeHandler(endpoint)); // optional: the WebSocket upgrade
 * ```
 */
export function mcpFastify(endpoint: Endpoint, options: McpFastifyOptions = {}): (fastify: FastifyInstanceLike) => Promise<void> {
  const context = contextOf(options);
  return async (fastify) => {
    // Scoped to this plugin (the app's other routes keep their parsers): no parser reads the
    // MCP route's body, so the endpoint reads it itself, under its per-body and process-wide
    // bounds (limits.maxBodyBytes, maxBodyBytesTotal). A parser would buffer every body first.
    fastify.removeAllContentTypeParsers();
    fastify.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
    fastify.setErrorHandler((error, _request, reply) => {
      const code = BODY_ERRORS[error.code ?? ''] ?? (error.statusCode === 400 ? 'parse-error' : 'internal-error');
      reply.hijack();
      void writeResponse(reply.raw, refusal(new ContinuityError(code)));
    });
    const live = new Map<ServerResponse, Promise<void>>();
    fastify.route({
      method: ['GET', 'POST', 'DELETE'],
      url: options.path ?? '/mcp',
      handler: async (request, reply) => {
        reply.hijack();
        // Fastify's parser has read the body when there was one to parse; otherwise it is unread.
        const body = request.raw.readableEnded ? (parsedBodyText(request.body) ?? '') : undefined;
        const served = serveNode(endpoint, request.raw, reply.raw, context, body);
        live.set(reply.raw, served);
        await served;
        live.delete(reply.raw);
      },
    });
    fastify.addHook('preClose', async () => {
      await endpoint.close();
      // The sessions ended their streams; let the last bytes go out so the connections are
      // idle when Fastify closes the server (its keep-alive timeout would hold them for
      // over a minute). A reader that stopped reading is not waited for.
      let timer: ReturnType<typeof setTimeout> | undefined;
      const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, options.closeGraceMs ?? 2_000)));
      await Promise.race([Promise.all(live.values()), grace]);
      clearTimeout(timer);
      for (const res of live.keys()) res.destroy();
    });
  };
}
