import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { addTool } from './add.js';
import { contentTools } from './content.js';
import { elicitationTools } from './elicitation.js';
import { emitTool } from './emit.js';
import { jsonSchemaTool } from './json-schema.js';
import { notificationTools } from './notifications.js';
import { samplingTools } from './sampling.js';
import { tallyTool } from './tally.js';
import type { ExampleTool } from './table.js';
import { registerV1Tool, type V1Session } from './v1.js';
import { updateWatchedTool, type WatchedResource } from './watched.js';

export { EMIT_MAX_BYTES, EMIT_MAX_COUNT, EMIT_MAX_INTERVAL_MS, EMIT_MAX_TOTAL_BYTES } from './emit.js';
export type { ExampleTool, ToolContext, ToolResult } from './table.js';
export { ToolInputError } from './table.js';
export type { WatchedResource } from './watched.js';

/** What the stateful tools keep: `tally`'s runs and the watched resource's revision. */
export interface ToolState {
  readonly runs: Map<string, number>;
  readonly watched: WatchedResource;
}

/** Fresh state for one tool table (one session on the 2025-era leg, one handler on the stateless one). */
export function toolState(): ToolState {
  return { runs: new Map(), watched: { revision: 0 } };
}

/** Every example tool, in `tools/list` order, over `state`: the one definition both eras serve. */
export function exampleTools(state: ToolState): ExampleTool[] {
  return [
    addTool,
    ...contentTools,
    ...notificationTools,
    emitTool,
    ...samplingTools,
    ...elicitationTools,
    jsonSchemaTool,
    tallyTool(state.runs),
    updateWatchedTool(state.watched),
  ];
}

/** Registers every example tool on an SDK v1 server (one per session). */
export function registerTools(server: McpServer, session: V1Session, state: ToolState): void {
  for (const tool of exampleTools(state)) registerV1Tool(server, session, tool);
}
