/** Endpoint options, their defaults, and validation. */
import type { RetentionOptions, Store } from '../store/types.js';
import type { HostGuardOptions } from './host-guard.js';
import type { ClusterOptions } from './cluster/options.js';
import type { HandleContext, SdkServerLike, ServerFactory, SessionContext } from './session/context.js';
import type { EndpointLimits } from './stream/limits.js';
import type { UpgradeOptions } from './upgrade/options.js';
import type { EndpointHooks } from '../telemetry/events.js';
import type { ModernHandler } from './eras.js';

export type { ClusterOptions, EndpointLimits, HandleContext, SdkServerLike, ServerFactory, SessionContext, UpgradeOptions };
export { DEFAULT_LIMITS, resolveLimits, type ResolvedLimits } from './stream/limits.js';

/**
 * Options of {@link createEndpoint}. The hooks (`onResume`, `onRefusal`, `onTakeover`,
 * `onRebuild`, `onPassivation`, `onDrain`) get the events the metrics count (docs/operations.md).
 */
export interface EndpointOptions extends EndpointHooks {
  /** A fresh official-SDK server per session. */
  server: ServerFactory;
  /**
   * Can this server's sessions be rebuilt (after a restart, a passivation, a takeover)?
   * Default true: a rebuilt session gets its `initialize`, its lasting requests (log level,
   * resource subscriptions) and its saved application state (`SessionContext.saveState`)
   * back. `false` declares that the server holds per-session state it cannot restore: such
   * sessions are never passivated, and one that lost its server is ended and answered 404
   * `session-not-rebuildable`, so its client re-initializes instead of continuing without
   * its state. A factory can also refuse one rebuild by throwing that error.
   */
  rebuildable?: boolean | undefined;
  /** Where sessions and event logs live (default: a memory store). */
  store?: Store | undefined;
  /** Retention of the default memory store (ignored when `store` is given). */
  retention?: RetentionOptions | undefined;
  limits?: EndpointLimits | undefined;
  /** Answer POSTs with JSON instead of SSE. Server→client messages then go on the GET stream. */
  jsonResponse?: boolean | undefined;
  /** `retry:` sent to 2025-11-25 clients with the priming event and before a server-side close, ms (default 1000). */
  retryMs?: number | undefined;
  /** SSE comment sent on idle live streams, ms (default 15,000; 0 turns it off). */
  keepAliveMs?: number | undefined;
  /** The opt-in SSE→WebSocket upgrade (docs/design.md §4). Off by default. */
  upgrade?: UpgradeOptions | undefined;
  /** Host/Origin validation (DNS rebinding). The Node adapter turns it on for loopback binds. */
  hostGuard?: HostGuardOptions | false | undefined;
  /** Session ID generator; must return ≥ 128 bits of CSPRNG output as visible ASCII. */
  sessionId?: (() => string) | undefined;
  /** Errors that have no caller to go to (store failures in the background, SDK errors). */
  onError?: ((error: Error) => void) | undefined;
  /** Clock, for tests. */
  now?: (() => number) | undefined;
  /**
   * Several replicas sharing one store. On by default when the store is shared between
   * processes (Redis); `enabled: true` also turns it on for endpoints sharing one store
   * object in a process (memory, SQLite), which is how the protocol is tested in-process.
   */
  cluster?: ClusterOptions | undefined;
  /**
   * The 2026-07-28 leg on the same URL: `createMcpHandler(factory, { legacy: 'reject' })`
   * of the official SDK v2. Requests its `isLegacyRequest` classifies as 2025-era get our
   * sessions; all others go to this handler (docs/design.md, "Two protocol eras").
   */
  modern?: ModernHandler | undefined;
}

