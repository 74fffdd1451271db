/**
 * Reconnection delays, pure: exponential backoff with equal jitter, so a fleet of clients
 * does not reconnect in lockstep after an outage, and the server's `retry:` as a floor (it
 * knows when it will be back) — never as a reason to come back sooner than backoff would:
 * a server that sends `retry: 0` still gets a backing-off client, not a flood.
 */

/** Reconnection options. */
export interface ReconnectOptions {
  /** First backoff delay, ms (default 100). */
  initialDelayMs?: number | undefined;
  /** Largest backoff delay, ms (default 10,000). */
  maxDelayMs?: number | undefined;
  /** Growth per failed attempt (default 2). */
  factor?: number | undefined;
  /**
   * Failed reconnects of a request's stream before its requests fail with `request-abandoned` (`mayHaveRun`)
   * (default 20). The standalone stream has no cap: it retries for the transport's life.
   */
  maxRequestAttempts?: number | undefined;
  /**
   * Divergences (or lost sessions) in a row after which the transport stops
   * re-initializing and fails with `divergence-limit` (default 5). Divergences are in a
   * row when each comes within `divergenceWindowMs` of the previous re-initialization and
   * no request was answered in between; from the second one on, re-initializing waits
   * for a jittered backoff.
   */
  maxDivergences?: number | undefined;
  /** A session that lives this long without diverging ends the row, ms (default 60,000). */
  divergenceWindowMs?: number | undefined;
  /**
   * The longest one message waits through an outage in total, ms (default 120,000). Counted
   * from its first attempt that found no server to take it (the connection refused, or a
   * `503` whose reason says it was not accepted), it bounds every wait between attempts,
   * backoff and the server's `Retry-After` alike: each wait is cut to what is left, and a
   * `Retry-After` longer than what is left fails the message at once instead of waiting.
   * The message then fails as never sent, retryable: `server-unreachable`, or the server's
   * own not-accepted refusal (`server-draining`, …). Whichever of this and
   * `maxRequestAttempts` runs out first ends the ride-through. A request the server took,
   * whose response stream is lost, resumes within the same bound (counted from the loss; a
   * resume a server answers starts it afresh), then fails with `request-abandoned`: it may have run.
   */
  maxOutageMs?: number | undefined;
}

export type ResolvedReconnect = { [K in keyof ReconnectOptions]-?: number };

export const DEFAULT_RECONNECT: ResolvedReconnect = {
  initialDelayMs: 100,
  maxDelayMs: 10_000,
  factor: 2,
  maxRequestAttempts: 20,
  maxDivergences: 5,
  divergenceWindowMs: 60_000,
  maxOutageMs: 120_000,
};

/** The server's `retry:` is honoured up to this, ms: a hostile value cannot park a client forever. */
export const MAX_SERVER_RETRY_MS = 60_000;

/**
 * Options with defaults; `undefined` members take the default. A member that is not a number
 * throws a TypeError, one that is negative or not finite a RangeError, each naming it.
 */
export function resolveReconnect(options: ReconnectOptions | undefined): ResolvedReconnect {
  const out = { ...DEFAULT_RECONNECT };
  for (const [k, v] of Object.entries(options ?? {})) {
    if (v === undefined) continue;
    if (typeof v !== 'number') throw new TypeError(`reconnect.${k} must be a number, got ${typeof v}`);
    if (!(v >= 0 && Number.isFinite(v))) throw new RangeError(`reconnect.${k} must be a finite number ≥ 0, got ${String(v)}`);
    out[k as keyof ResolvedReconnect] = v;
  }
  return out;
}

/**
 * Delay before reconnect attempt `attempt` (0-based): jittered exponential backoff, at
 * least the server's last `retry:` value `retryMs` (capped at {@link MAX_SERVER_RETRY_MS}).
 */
export function reconnectDelay(options: ResolvedReconnect, attempt: number, retryMs: number | undefined, random: () => number = Math.random): number {
  const ceiling = Math.min(options.maxDelayMs, options.initialDelayMs * options.factor ** attempt);
  // Equal jitter: uniformly in [ceiling/2, ceiling]. Not full jitter ([0, ceiling]): a retry never comes sooner than half the nominal delay.
  const backoff = Math.round(ceiling / 2 + random() * (ceiling / 2));
  return Math.max(Math.min(retryMs ?? 0, MAX_SERVER_RETRY_MS), backoff);
}
