import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { LoggingLevelSchema, SetLevelRequestSchema, type LoggingLevel, type ServerNotification, type ServerRequest } from '@modelcontextprotocol/sdk/types.js';

/** The `extra` argument the SDK hands to every request handler of a server. */
export type RequestExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** Severity order as defined by the protocol: `debug` (0) … `emergency` (7). */
const SEVERITY: ReadonlyMap<LoggingLevel, number> = new Map(LoggingLevelSchema.options.map((level, index) => [level, index]));

/**
 * Sends `notifications/message` on the stream of the request being handled,
 * honouring the level the client chose with `logging/setLevel`.
 *
 * Why not `McpServer.sendLoggingMessage`: that sends a notification unrelated to
 * any request, so a Streamable HTTP transport routes it to the standalone GET
 * stream (or drops it when there is none). Tool logs belong to the tool call's
 * own stream, where resumption can account for them. The SDK keeps its level
 * table private, so this class serves `logging/setLevel` itself; construct it
 * before the server connects, as it declares the `logging` capability.
 */
export class RequestLogger {
  /** Minimum level per session (`undefined` key: sessionless transports). */
  readonly #levels = new Map<string | undefined, LoggingLevel>();

  /** Declares the `logging` capability on `server` and serves `logging/setLevel`. */
  constructor(server: McpServer) {
    server.server.registerCapabilities({ logging: {} });
    server.server.setRequestHandler(SetLevelRequestSchema, (request, extra) => {
      this.#levels.set(extra.sessionId, request.params.level);
      return {};
    });
  }

  /** True when a message at `level` passes the session's `logging/setLevel` filter. */
  enabled(level: LoggingLevel, sessionId: string | undefined): boolean {
    const minimum = this.#levels.get(sessionId);
    // No setLevel yet: the spec leaves the default to the server; we send everything.
    if (minimum === undefined) return true;
    return (SEVERITY.get(level) ?? 0) >= (SEVERITY.get(minimum) ?? 0);
  }

  /**
   * Logs `data` on the stream of the request behind `extra`.
   * @returns whether the message was sent (false when filtered out by level).
   */
  async log(extra: RequestExtra, level: LoggingLevel, data: unknown, logger?: string): Promise<boolean> {
    if (!this.enabled(level, extra.sessionId)) return false;
    await extra.sendNotification({
      method: 'notifications/message',
      params: logger === undefined ? { level, data } : { level, logger, data },
    });
    return true;
  }
}
