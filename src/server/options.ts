/** Endpoint options, their defaults, and validation. */
import type { RetentionOptions, Store } from '../store/types.js';
import type { HostGuardOptions } from './host-guard.js';

/** The part of an official SDK server (v1 `McpServer`/`Server`, v2 `McpServer`/`Server`) we use. */
export interface SdkServerLike {
  connect(transport: never): Promise<void>;
  close(): Promise<void>;
}

/** Passed to the server factory for each new session. */
export interface SessionContext {
  readonly sessionId: string;
  /** `true` when the session is being rebuilt from the store after a restart. */
  readonly rehydrating: boolean;
}

/** Per-request context a host framework may pass to {@link Endpoint.handle}. */
export interface HandleContext {
  /** Authentication info, forwarded to the SDK server as `extra.authInfo`. */
  authInfo?: unknown | undefined;
  /**
   * The authenticated principal. A session created with one is bound to it: a request
   * from another principal is answered exactly like an unknown session (404).
   */
  principal?: string | undefined;
}

/** Limits. Every one has a default; breaching one is a typed error, never unbounded growth. */
export interface EndpointLimits {
  /** Largest accepted POST body, bytes (default 4 MiB) → 413 `body-too-large`. */
  maxBodyBytes?: number | undefined;
  /**
   * Bytes of POST bodies being received by the whole process at once (default 128 MiB); a
   * body that would pass it → 503 `server-busy` (retryable). Counted process-wide.
   */
  maxBodyBytesTotal?: number | undefined;
  /** Largest single outgoing message, bytes (default 4 MiB) → `event-too-large`. */
  maxEventBytes?: number | undefined;
  /** Live sessions in this process (default 10,000) → 503 `session-limit`. */
  maxSessions?: number | undefined;
  /** Streams kept per session; the oldest completed ones are dropped first (default 1,000). */
  maxStreamsPerSession?: number | undefined;
  /** Requests in flight per session (default 1,000). */
  maxInFlightPerSession?: number | undefined;
  /** Bytes queued for one slow SSE reader before it is cut; it can resume from the log (default 8 MiB). */
  maxBufferedBytes?: number | undefined;
  /**
   * Bytes queued for all SSE readers of the process together (default 256 MiB): past it, a
   * reader that is behind is cut (it resumes from the log); one keeping up is not.
   */
  maxBufferedBytesTotal?: number | undefined;
  /**
   * An SSE reader with bytes queued that has not once emptied its queue in this long, ms,
   * is cut (it resumes from the log); a response that ended with bytes queued gets as long
   * before its connection is closed (default 60 s).
   */
  readerStallMs?: number | undefined;
  /** Idle time after which a session without a live reader expires, ms (default 30 min). */
  sessionIdleMs?: number | undefined;
  /** Events read from the store per replay page (default 512); a page is also bounded to about 64 KiB. */
  replayPageSize?: number | undefined;
  /**
   * On a durable or shared store, a session with no reader and nothing in flight is dropped
   * from memory after this long, ms (default 60,000), and rebuilt on its next request the
   * way a restart rebuilds it. What that loses is listed in `docs/clusters.md`.
   */
  passivateAfterMs?: number | undefined;
  /** GET readers (resumes, standalone streams) open at once per session (default 16) → 429 `reader-limit`. */
  maxReadersPerSession?: number | undefined;
}

/** Options of {@link createEndpoint}. */
export interface EndpointOptions {
  /** A fresh official-SDK server per session. */
  server: (context: SessionContext) => SdkServerLike | Promise<SdkServerLike>;
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
}

/** Options of the replicas of a cluster (see `docs/clusters.md`). */
export interface ClusterOptions {
  /** Run the ownership protocol even on a store that is not shared between processes. */
  enabled?: boolean | undefined;
  /** This replica's id (default: random). Unique among the replicas sharing the store. */
  replicaId?: string | undefined;
  /**
   * How long an owner holds a session without renewing, ms (default 3,000). A dead owner's
   * sessions are taken over this long after its last renewal; renewals run every third of it.
   */
  leaseMs?: number | undefined;
}

/** Options of the SSE→WebSocket upgrade. */
export interface UpgradeOptions {
  /** Offer the upgrade to clients that ask for it (`X-MCP-Upgrade: websocket` on the GET stream). */
  websocket: boolean;
  /** How long an offer stays valid, ms (default 10,000); then the session is superseded. */
  expiresInMs?: number | undefined;
  /** Offers pending at once in this process (default 100); beyond it no offer is made. */
  maxPending?: number | undefined;
}

export type ResolvedLimits = { readonly [K in keyof EndpointLimits]-?: NonNullable<EndpointLimits[K]> };

export const DEFAULT_LIMITS: ResolvedLimits = {
  maxBodyBytes: 4 * 1024 * 1024,
  maxBodyBytesTotal: 128 * 1024 * 1024,
  maxEventBytes: 4 * 1024 * 1024,
  maxSessions: 10_000,
  maxStreamsPerSession: 1_000,
  maxInFlightPerSession: 1_000,
  maxBufferedBytes: 8 * 1024 * 1024,
  maxBufferedBytesTotal: 256 * 1024 * 1024,
  readerStallMs: 60_000,
  sessionIdleMs: 30 * 60 * 1000,
  replayPageSize: 512,
  passivateAfterMs: 60_000,
  maxReadersPerSession: 16,
};

export function resolveLimits(limits: EndpointLimits | undefined): ResolvedLimits {
  // An option given as `undefined` takes its default.
  const out: Record<string, unknown> = { ...DEFAULT_LIMITS };
  for (const [k, v] of Object.entries(limits ?? {})) if (v !== undefined) out[k] = v;
  for (const [k, v] of Object.entries(out)) {
    if (!(typeof v === 'number' && v > 0)) throw new RangeError(`limits.${k} must be a positive number, got ${String(v)}`);
  }
  return out as ResolvedLimits;
}
