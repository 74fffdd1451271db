/**
 * Rows of divergences, pure: a server that diverges again soon after each
 * re-initialization (flapping session ids or epochs, ids that go down) must not get a new
 * session per turn of a loop. A divergence is in a row with the previous one when it
 * comes within `divergenceWindowMs` of the last re-initialization and no request was
 * answered in between. From the second in a row on, re-initializing waits a jittered
 * backoff; at `maxDivergences` the transport gives up.
 */
import { ContinuityError } from '../protocol/errors.js';
import { reconnectDelay, type ResolvedReconnect } from './backoff.js';

export interface RowStep {
  /** This divergence's place in the row (1: the session before it was fine). */
  consecutive: number;
  /** Wait before re-initializing, ms. */
  backoffMs: number;
  /** Set when the row reached the limit: do not re-initialize, fail with this. */
  limit: ContinuityError | undefined;
}

export class DivergenceRow {
  readonly #options: ResolvedReconnect;
  readonly #random: () => number;
  #count = 0;
  #reinitializedAt = Number.NEGATIVE_INFINITY;

  constructor(options: ResolvedReconnect, random: () => number = Math.random) {
    this.#options = options;
    this.#random = random;
  }

  /** A divergence (or lost session) `error` was found at `now`. */
  diverged(error: ContinuityError, now: number): RowStep {
    this.#count = now - this.#reinitializedAt < this.#options.divergenceWindowMs ? this.#count + 1 : 1;
    const consecutive = this.#count;
    const backoffMs = consecutive > 1 ? reconnectDelay(this.#options, consecutive - 2, undefined, this.#random) : 0;
    const limit =
      consecutive < this.#options.maxDivergences
        ? undefined
        : new ContinuityError(
            'divergence-limit',
            `The server diverged ${consecutive} times in a row (last: ${error.code}); the transport gave up re-initializing`,
            { divergences: consecutive, last: error.code },
            { cause: error },
          );
    return { consecutive, backoffMs, limit };
  }

  /** A new session is up. */
  reinitialized(now: number): void {
    this.#reinitializedAt = now;
  }

  /** A request was answered: the session works, the row ends. */
  answered(): void {
    this.#count = 0;
  }
}
