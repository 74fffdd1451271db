/**
 * The total bound on one message's wait through an outage (`reconnect.maxOutageMs`). Without
 * it, each wait is bounded (backoff to `maxDelayMs`, a server's `Retry-After` to a minute) and
 * so is the count of attempts, but their product is not: twenty waits of a minute each. The
 * budget runs from the message's first attempt that found no server to take it and covers
 * every wait after it. Pure but for the clock.
 */
export class OutageBudget {
  readonly #maxMs: number;
  readonly #now: () => number;
  #since: number | undefined;

  constructor(maxMs: number, now: () => number = Date.now) {
    this.#maxMs = maxMs;
    this.#now = now;
  }

  /** An attempt found no server to take it: the outage, for this message, runs from the first. */
  failed(): void {
    this.#since ??= this.#now();
  }

  /** How long this message has waited through the outage so far, ms. */
  get spentMs(): number {
    return this.#since === undefined ? 0 : this.#now() - this.#since;
  }

  /**
   * The wait before the next attempt: `delayMs`, cut to what is left of the budget; undefined
   * when nothing is left, or when the server asked for a wait (`retryAfterMs`, uncapped)
   * longer than what is left: waiting would end in the same failure, later.
   */
  next(delayMs: number, retryAfterMs?: number): number | undefined {
    const left = this.#maxMs - this.spentMs;
    if (left <= 0 || (retryAfterMs !== undefined && retryAfterMs > left)) return undefined;
    return Math.min(delayMs, left);
  }
}
