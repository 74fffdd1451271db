/**
 * Admission of incoming requests per event-loop turn.
 *
 * One poll phase of the event loop hands every socket that has data to its callback, and a
 * request's handling (parsing, the SDK's dispatch, the start of a tool) runs to its first
 * I/O wait inside that callback. A hundred requests arriving together (clients reconnecting
 * after a restart, a round of tool calls) therefore hold the loop for a hundred times one
 * request's work, and every live stream, timer and keep-alive waits for all of them.
 *
 * Once requests started in the current turn have used {@link REQUEST_BUDGET_MS}, the next
 * ones wait for a later turn, in arrival order, and start one at a time while each turn's
 * budget lasts. The work is the same; it is interleaved with the rest of the loop instead
 * of arriving as one stall.
 */
import { queueMacrotask } from '#turn';

/** Request handling started per event-loop turn before further requests wait a turn, ms. */
export const REQUEST_BUDGET_MS = 2;

/** Admission of the requests that share one event loop; `ProcessState` (`./process.ts`) holds the process's. */
export class Admission {
  /** When the current turn's first request started; -1 once the turn has ended. */
  #turnStart = -1;
  #turnEndQueued = false;
  /** Requests waiting for a turn, oldest first; each has one pending {@link #pump}. */
  readonly #waiting: Array<() => void> = [];

  /**
   * Call before handling a request: `undefined` when it may start now, else a promise that
   * resolves when its turn comes. Never rejects.
   */
  admit(): Promise<void> | undefined {
    if (this.#waiting.length === 0) {
      const now = performance.now();
      if (this.#turnStart < 0) {
        this.#turnStart = now;
        this.#endTurnSoon();
        return undefined;
      }
      if (now - this.#turnStart < REQUEST_BUDGET_MS) return undefined;
    }
    const turn = new Promise<void>((resolve) => this.#waiting.push(resolve));
    queueMacrotask(this.#pump);
    return turn;
  }

  readonly #endTurn = (): void => {
    this.#turnEndQueued = false;
    this.#turnStart = -1;
  };

  /** Ends the current turn after the work queued so far (a later macrotask). */
  #endTurnSoon(): void {
    if (this.#turnEndQueued) return;
    this.#turnEndQueued = true;
    queueMacrotask(this.#endTurn);
  }

  /**
   * One waiting request's chance to start. Each runs as its own macrotask, so the request it
   * starts runs (to its first I/O wait) before the next pump measures the turn.
   */
  readonly #pump = (): void => {
    const now = performance.now();
    if (this.#turnStart < 0) {
      this.#turnStart = now;
      this.#endTurnSoon();
    } else if (now - this.#turnStart >= REQUEST_BUDGET_MS) {
      // Spent: try again in a later macrotask, which ends this turn itself. It does not wait
      // for endTurnSoon's: a runtime that cancels the timers of a request that has ended
      // (Workers) may never run that one, and a pump that only rescheduled itself would spin.
      queueMacrotask(() => {
        this.#endTurn();
        this.#pump();
      });
      return;
    }
    this.#waiting.shift()?.();
  };
}
