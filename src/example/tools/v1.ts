/** The example tool table on the SDK v1 `McpServer` (the 2025-era leg: one server per session). */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, McpError, type CallToolResult, type ElicitRequestFormParams } from '@modelcontextprotocol/sdk/types.js';
import type { RequestExtra, RequestLogger } from '../logging.js';
import { ToolInputError, type ElicitAnswer, type ElicitAsk, type ExampleTool, type SampleAnswer, type SampleAsk, type ToolContext } from './table.js';

/** What the tools of one session share: its logger and its resource subscriptions. */
export interface V1Session {
  readonly logs: RequestLogger;
  readonly subscriptions: ReadonlySet<string>;
}

/** Registers `tool` on `server`. */
export function registerV1Tool(server: McpServer, session: V1Session, tool: ExampleTool): void {
  const run = async (args: Record<string, unknown>, extra: RequestExtra): Promise<CallToolResult> => {
    try {
      return (await tool.run(args, contextOf(server, session, extra))) as CallToolResult;
    } catch (error) {
      // A rule the schema cannot say is still an invalid-params answer, not a tool result.
      if (error instanceof ToolInputError) throw new McpError(ErrorCode.InvalidParams, error.message, error.data);
      throw error;
    }
  };
  const config = { description: tool.description, inputSchema: tool.inputSchema, outputSchema: tool.outputSchema };
  // The SDK calls a handler without an input schema with `extra` alone.
  if (tool.inputSchema)
    server.registerTool(tool.name, config as { description: string }, ((args: Record<string, unknown>, extra: RequestExtra) => run(args, extra)) as never);
  else server.registerTool(tool.name, config as { description: string }, (extra: RequestExtra) => run({}, extra));
}

function contextOf(server: McpServer, session: V1Session, extra: RequestExtra): ToolContext {
  const progressToken = extra._meta?.progressToken;
  async function ask(_key: string, request: ElicitAsk | SampleAsk): Promise<ElicitAnswer | SampleAnswer> {
    const capabilities = server.server.getClientCapabilities();
    const options = { relatedRequestId: extra.requestId, signal: extra.signal };
    // A request the client did not declare it can answer would only get "method not found".
    if (request.kind === 'elicit') {
      if (capabilities?.elicitation === undefined) throw new Error('The client does not support elicitation (no elicitation capability declared).');
      const requestedSchema = request.requestedSchema as ElicitRequestFormParams['requestedSchema'];
      return server.server.elicitInput({ mode: 'form', message: request.message, requestedSchema }, options);
    }
    if (capabilities?.sampling === undefined) throw new Error('The client does not support sampling (no sampling capability declared).');
    return server.server.createMessage({ messages: request.messages, maxTokens: request.maxTokens }, options);
  }
  return {
    era: '2025',
    signal: extra.signal,
    progressToken,
    async log(level, data, logger) {
      await session.logs.log(extra, level, data, logger);
    },
    async progress(progress, total) {
      if (progressToken === undefined) return;
      await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress, total } });
    },
    ask: ask as ToolContext['ask'],
    async resourceUpdated(uri) {
      // About the session, not the call: sent unrelated, on the standalone GET stream.
      if (!session.subscriptions.has(uri)) return false;
      await server.server.sendResourceUpdated({ uri });
      return true;
    },
    closeStream: extra.closeSSEStream,
  };
}
