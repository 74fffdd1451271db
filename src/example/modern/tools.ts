/**
 * The example tool table (`src/example/tools`) on the SDK v2 `McpServer` of the
 * 2026-07-28 leg: stateless, one server per request. How each session-bound action is
 * served here is said on `ToolContext`: the log level is the request's own, a question to
 * the client is an `input_required` round, and a resource change goes to the
 * `subscriptions/listen` streams through the bus.
 */
import {
  ProtocolError,
  ProtocolErrorCode,
  inputRequired,
  inputResponse,
  type InputRequest,
  type McpServer,
  type ServerContext,
  type ServerEventBus,
} from '@modelcontextprotocol/server';
import { ToolInputError, type ElicitAnswer, type ElicitAsk, type ExampleTool, type SampleAnswer, type SampleAsk, type ToolContext } from '../tools/table.js';

/** Thrown by `ask` when this round lacks the answer: the round ends with `input_required`. */
class NeedsInput extends Error {
  constructor(
    readonly key: string,
    readonly request: InputRequest,
  ) {
    super(`input required: ${key}`);
    this.name = 'NeedsInput';
  }
}

/** Registers `tool` on `server`; resource changes are published on `bus`. */
export function registerModernTool(server: McpServer, bus: ServerEventBus, tool: ExampleTool): void {
  const run = async (args: Record<string, unknown>, ctx: ServerContext) => {
    try {
      return await tool.run(args, contextOf(ctx, bus));
    } catch (error) {
      if (error instanceof NeedsInput) return inputRequired({ inputRequests: { [error.key]: error.request } });
      if (error instanceof ToolInputError) throw new ProtocolError(ProtocolErrorCode.InvalidParams, error.message, error.data);
      throw error;
    }
  };
  const config = { description: tool.description, inputSchema: tool.inputSchema, outputSchema: tool.outputSchema };
  // The SDK calls a handler without an input schema with the context alone.
  if (tool.inputSchema) server.registerTool(tool.name, config as never, ((args: Record<string, unknown>, ctx: ServerContext) => run(args, ctx)) as never);
  else server.registerTool(tool.name, config as never, ((ctx: ServerContext) => run({}, ctx)) as never);
}

function contextOf(ctx: ServerContext, bus: ServerEventBus): ToolContext {
  const progressToken = ctx.mcpReq._meta?.progressToken;
  function ask(key: string, request: ElicitAsk | SampleAsk): Promise<ElicitAnswer | SampleAnswer> {
    const view = inputResponse(ctx.mcpReq.inputResponses, key);
    if (request.kind === 'elicit' && view.kind === 'elicit') return Promise.resolve({ action: view.action, content: view.content });
    if (request.kind === 'sample' && view.kind === 'sampling') return Promise.resolve({ content: view.result.content, model: view.result.model });
    // A client that did not declare the capability gets the SDK's -32021, not a question.
    const asked =
      request.kind === 'elicit'
        ? inputRequired.elicit({ message: request.message, requestedSchema: request.requestedSchema as never })
        : inputRequired.createMessage({ messages: request.messages, maxTokens: request.maxTokens });
    return Promise.reject(new NeedsInput(key, asked));
  }
  return {
    era: '2026',
    signal: ctx.mcpReq.signal,
    progressToken,
    async log(level, data, logger) {
      // Filtered by the log level this request's _meta carries: there is no session to hold one.
      await ctx.mcpReq.log(level, data, logger);
    },
    async progress(progress, total) {
      if (progressToken === undefined) return;
      await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress, total } });
    },
    ask: ask as ToolContext['ask'],
    resourceUpdated(uri) {
      // No session holds a subscription: the streams listening for this URI hear it.
      bus.publish({ kind: 'resource_updated', uri });
      return Promise.resolve(false);
    },
  };
}
