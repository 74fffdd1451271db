/**
 * `mcp-continuity/client`: a transport that proves continuity on every reconnect, or
 * re-initializes. Bundlers for browsers take web.ts instead (no `fileCheckpoint`).
 */
export * from './web.js';
export { fileCheckpoint, type FileCheckpointOptions } from './file-checkpoint.js';
