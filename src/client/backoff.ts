/**
 * Reconnection delays, pure: the server's `retry:` when it sent one (it knows when it
 * will be back), otherwise exponential backoff with full jitter so a fleet of clients
 * does not reconnect in lockstep after an outage.
 */

/** Reconnection options. */
export interface ReconnectOptions {
  /** First backoff delay, ms (default 100). */
  initialDelayMs?: number;
  /** Largest backoff delay, ms (default 10,000). */
  maxDelayMs?: number;
  /** Growth per failed attempt (default 2). */
  factor?: number;
  /**
   * Failed reconnects of a request's stream before its requests fail with `stream-lost`
   * (default 20). The standalone stream has no cap: it retries for the transport's life.
   */
  maxRequestAttempts?: number;
}

export const DEFAULT_RECONNECT: Required<ReconnectOptions> = {
  initialDelayMs: 100,
  maxDelayMs: 10_000,
  factor: 2,
  maxRequestAttempts: 20,
};

/**
 * Delay before reconnect attempt `attempt` (0-based). `retryMs` is the server's last
 * `retry:` value, honoured as given for the first attempt and as the base after that.
 */
export function reconnectDelay(options: Required<ReconnectOptions>, attempt: number, retryMs: number | undefined, random: () => number = Math.random): number {
  if (retryMs !== undefined && attempt === 0) return retryMs;
  const base = retryMs ?? options.initialDelayMs;
  const ceiling = Math.min(options.maxDelayMs, base * options.factor ** attempt);
  // Full jitter: uniformly in [ceiling/2, ceiling], never below half the nominal delay.
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}
