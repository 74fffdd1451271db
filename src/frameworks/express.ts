/**
 * `mcp-continuity/express`: the endpoint as an Express route handler. Works with and
 * without `express.json()` (or any body parser) in front: a body already parsed is used,
 * an unread one is streamed. Authentication the official SDK's way (`requireBearerAuth`,
 * which sets `req.auth`) binds each session to its principal and reaches the SDK
 * server's handlers as `extra.authInfo`, as with the SDK's own transport.
 *
 * Needs no Express types: the handler takes Node's request and response, which Express
 * extends.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { serveNode } from '../node/index.js';
import type { Endpoint, HandleContext } from '../server/index.js';
import { parsedBodyText, principalOfAuth, type AuthInfoLike } from './body.js';

/** The parts of an Express request this adapter reads. */
export interface ExpressRequestLike extends IncomingMessage {
  /** What a body parser (`express.json()`, …) left, if one ran. */
  body?: unknown;
  /** What the SDK's `requireBearerAuth` left, if it ran. */
  auth?: AuthInfoLike | undefined;
}

/** Options of {@link mcpExpress}. */
export interface McpExpressOptions {
  /**
   * The principal a session is bound to (default: from `req.auth`, the token's client ID,
   * refined by `req.auth.extra.sub`). A session ID presented under another principal is
   * answered exactly like an unknown session (404).
   */
  principal?: ((req: ExpressRequestLike) => string | undefined | Promise<string | undefined>) | undefined;
  /** What the SDK server's handlers see as `extra.authInfo` (default: `req.auth`). */
  authInfo?: ((req: ExpressRequestLike) => unknown) | undefined;
}

/**
 * An Express handler for `endpoint`. Mount it on every method of one path.
 *
 * @example
 * ```ts
 * const app = express();
 * app.use(express.json());
 * app.all('/mcp', mcpExpress(endpoint));
 * const server = app.listen(3000);
 * server.on('upgrade', upgradeHandler(endpoint)); // optional: the WebSocket upgrade
 * ```
 */
export function mcpExpress(endpoint: Endpoint, options: McpExpressOptions = {}): (req: IncomingMessage, res: ServerResponse) => void {
  const principal = options.principal ?? ((req: ExpressRequestLike) => principalOfAuth(req.auth));
  const authInfo = options.authInfo ?? ((req: ExpressRequestLike) => req.auth);
  const context = async (req: ExpressRequestLike): Promise<HandleContext> => {
    const out: HandleContext = {};
    const p = await principal(req);
    if (p !== undefined) out.principal = p;
    const info = authInfo(req);
    if (info !== undefined) out.authInfo = info;
    return out;
  };
  return (req: ExpressRequestLike, res) => {
    // A parser that ran has read the stream to its end; otherwise the body is still on the wire.
    const body = req.readableEnded ? (parsedBodyText(req.body) ?? '') : undefined;
    void serveNode(endpoint, req, res, context, body);
  };
}
