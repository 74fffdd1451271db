/**
 * `mcp-continuity/client` for browsers (the `browser` export condition):
 * everything but `fileCheckpoint`, which needs `node:fs`. Use `memoryCheckpoint`, or a
 * `CheckpointStore` of your own (IndexedDB, localStorage) to survive a page reload.
 */
export { ContinuityClientTransport, type ContinuityClientOptions, type DivergenceReport, type UnfinishedRequest } from './transport.js';
export { memoryCheckpoint, type CheckpointStore, type CheckpointStoreOptions, type SessionCheckpoint } from './checkpoint.js';
export { DivergenceError, CheckpointError, isDivergenceError, isCheckpointError, type DivergenceCode } from './errors.js';
export {
  createStreamVerifier,
  verifyReconnect,
  isDivergence,
  type Verdict,
  type DivergenceVerdict,
  type StreamCheckpoint,
  type StreamVerifier,
  type IdScheme,
} from './verifier.js';
export { DEFAULT_RECONNECT, type ReconnectOptions } from './backoff.js';
export { ContinuityError, isContinuityError, type ErrorCode } from '../protocol/errors.js';
export type { ReconnectEvent } from '../telemetry/events.js';
