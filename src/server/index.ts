/** `mcp-continuity/server`: the Streamable HTTP endpoint. */
export { DEFAULT_DRAIN_MS, DEFAULT_RELEASE_MS, createEndpoint, type CloseOptions, type Endpoint } from './endpoint.js';
export type { EndpointOptions, EndpointLimits, HandleContext, SessionContext, SdkServerLike } from './options.js';
export { DEFAULT_LIMITS } from './options.js';
export { ProcessState, defaultProcess } from './stream/process.js';
export { modernIdentity, type ModernHandler, type ModernIdentity, type ModernRequestOptions } from './eras.js';
export { loopbackGuard, isLoopbackHost, type HostGuardOptions } from './host-guard.js';
export { ContinuityError, isContinuityError, ERRORS, type ErrorCode } from '../protocol/errors.js';
export type { EndpointHooks, ResumeEvent, RefusalEvent, TakeoverEvent, RebuildEvent, PassivationEvent, DrainEvent } from '../telemetry/events.js';
export { METRIC } from '../telemetry/meter.js';
