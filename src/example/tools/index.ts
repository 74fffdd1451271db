import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestLogger } from '../logging.js';
import { registerAddTool } from './add.js';
import { registerContentTools } from './content.js';
import { registerElicitationTools } from './elicitation.js';
import { registerEmitTool } from './emit.js';
import { registerJsonSchemaTool } from './json-schema.js';
import { registerNotificationTools } from './notifications.js';
import { registerSamplingTools } from './sampling.js';
import { registerTallyTool } from './tally.js';

export { EMIT_MAX_BYTES, EMIT_MAX_COUNT, EMIT_MAX_INTERVAL_MS, EMIT_MAX_TOTAL_BYTES } from './emit.js';

/** Registers every tool of the example server. */
export function registerTools(server: McpServer, logs: RequestLogger): void {
  registerAddTool(server);
  registerContentTools(server);
  registerNotificationTools(server, logs);
  registerEmitTool(server, logs);
  registerSamplingTools(server);
  registerElicitationTools(server);
  registerJsonSchemaTool(server);
  registerTallyTool(server, logs);
}
