/** The endpoint's limits, their defaults, and validation. */
import { resolvePositive } from '../../protocol/options.js';

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
  /**
   * Lasting requests kept per session to rebuild it (a log level, one per resource
   * subscription; default 1,000) → 400 `session-state-limit`.
   */
  maxSessionStateEntries?: number | undefined;
  /** Bytes of a session's kept state, lasting requests plus application state (default 256 KiB) → `session-state-limit`. */
  maxSessionStateBytes?: number | undefined;
  /**
   * Modern-leg `subscriptions/listen` streams open at once per client (default 16) → 429
   * `listen-limit`. A client is its principal where the host names one, else
   * `HandleContext.client` (the peer's address under the Node adapters).
   */
  maxListensPerClient?: number | undefined;
  /** Modern-leg `subscriptions/listen` streams open at once in the process (default 1,024) → 429 `listen-limit`. */
  maxListens?: number | undefined;
  /** A rebuilt session's replay of its lasting requests may take this long, ms (default 10,000); past it the rebuild fails. */
  rebuildTimeoutMs?: number | undefined;
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
  maxSessionStateEntries: 1_000,
  maxSessionStateBytes: 256 * 1024,
  rebuildTimeoutMs: 10_000,
  maxListensPerClient: 16,
  maxListens: 1_024,
};

/** `limits` over the defaults; throws a RangeError naming the first one that is not a positive number. */
export function resolveLimits(limits: EndpointLimits | undefined): ResolvedLimits {
  return resolvePositive('limits', DEFAULT_LIMITS, limits);
}
