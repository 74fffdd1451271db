/**
 * `mcp-continuity/client`: a transport that proves continuity on every reconnect, or
 * re-initializes. Bundlers for browsers take web.ts instead (no `fileCheckpoint`).
 */
export {
  CheckpointError,
  ContinuityClientTransport,
  ContinuityError,
  DEFAULT_RECONNECT,
  DivergenceError,
  createStreamVerifier,
  isCheckpointError,
  isContinuityError,
  isDivergence,
  isDivergenceError,
  memoryCheckpoint,
  verifyReconnect,
  type CheckpointStore,
  type CheckpointStoreOptions,
  type ContinuityClientOptions,
  type DivergenceCode,
  type DivergenceReport,
  type DivergenceVerdict,
  type ErrorCode,
  type IdScheme,
  type ReconnectEvent,
  type ReconnectOptions,
  type SessionCheckpoint,
  type StreamCheckpoint,
  type StreamVerifier,
  type UnfinishedRequest,
  type Verdict,
} from './web.js';
export { DEFAULT_MAX_CHECKPOINT_BYTES, MAX_CHECKPOINT_BYTES, fileCheckpoint, type FileCheckpointOptions } from './file-checkpoint.js';
