/**
 * The project's example MCP server: an SDK v1 `McpServer` with every tool,
 * resource and prompt the official conformance suite's server scenarios call,
 * plus `emit`, `sample`, `elicit` and `update_watched_resource` for
 * stream-continuity tests. Transport-agnostic: connect it to any transport.
 *
 * @module
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { RequestLogger } from './logging.js';
import { registerPrompts } from './prompts.js';
import { registerResources } from './resources.js';
import { registerTools, toolState } from './tools/index.js';

export { EMIT_MAX_BYTES, EMIT_MAX_COUNT, EMIT_MAX_INTERVAL_MS, EMIT_MAX_TOTAL_BYTES } from './tools/index.js';
export { MAX_SUBSCRIPTIONS } from './resources.js';
export { WATCHED_RESOURCE_URI } from './resources.js';

/** Options for {@link createExampleServer}. */
export interface ExampleServerOptions {
  /** `serverInfo.name` reported at initialization. Default `mcp-continuity-example`. */
  name?: string;
  /** `serverInfo.version` reported at initialization. Default `1.0.0`. */
  version?: string;
}

/**
 * Creates a fresh example server. Each call returns a new, unconnected
 * instance with its own state (log level, subscriptions), so use one per
 * session: `await createExampleServer().connect(transport)`.
 *
 * Capabilities: tools, resources (with subscribe), prompts, completions, logging.
 */
export function createExampleServer(options: ExampleServerOptions = {}): McpServer {
  const server = new McpServer({
    name: options.name ?? 'mcp-continuity-example',
    version: options.version ?? '1.0.0',
  });
  // Capabilities can only be declared before connect(), so everything is wired here.
  const logs = new RequestLogger(server);
  const state = toolState();
  const subscriptions = registerResources(server, state.watched);
  registerTools(server, { logs, subscriptions }, state);
  registerPrompts(server);
  return server;
}
