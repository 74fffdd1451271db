/** `mcp-continuity/client`: a transport that proves continuity on every reconnect, or re-initializes. */
export { ContinuityClientTransport, type ContinuityClientOptions, type DivergenceReport } from './transport.js';
export {
  memoryCheckpoint, fileCheckpoint, type CheckpointStore, type CheckpointStoreOptions, type FileCheckpointOptions, type SessionCheckpoint,
} from './checkpoint.js';
export { DivergenceError, CheckpointError, isDivergenceError, isCheckpointError, type DivergenceCode } from './errors.js';
export {
  createStreamVerifier, verifyReconnect, isDivergence,
  type Verdict, type DivergenceVerdict, type StreamCheckpoint, type StreamVerifier, type IdScheme,
} from './verifier.js';
export { DEFAULT_RECONNECT, type ReconnectOptions } from './backoff.js';
export { ContinuityError, isContinuityError, type ErrorCode } from '../protocol/errors.js';
