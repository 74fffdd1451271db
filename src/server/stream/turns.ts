/**
 * The process-wide budget of producer time per event-loop turn.
 *
 * A producer that awaits each send runs on microtasks alone: without a bound it holds the
 * event loop (every socket, every timer, every other session) until it stops. Each stream
 * bounds its own batch in bytes; this bounds all producers together in time, because a
 * hundred producers each within their own bound still hold the loop a hundred times as long.
 *
 * Once the turn's budget is spent, a producer's next append resolves on the next turn,
 * after the work queued for that turn (the streams' flushes: what was appended goes out
 * before more is made). Producers cut short by the shared budget are released first, so
 * the budget rotates among them instead of going to the same producers every turn.
 *
 * The queued work (flushes) also has a deadline. One poll phase of the event loop can
 * handle a hundred incoming requests, each a millisecond or more of parsing and dispatch
 * that no producer budget covers; an event appended at its start would otherwise wait for
 * all of them. {@link runOverdue}, called where requests and appends come in, runs the
 * queued work as soon as it has waited a budget.
 *
 * Producers waiting for a turn are resumed a few at a time ({@link MIN_PRODUCERS_AT_ONCE}
 * and up, adapting to how much of the budget goes unused), not all at once, so that each
 * stream's batch is large enough to be worth its writes; those not resumed in a turn go
 * first in the next.
 */

import { queueMacrotask } from '#turn';

/** Producer time per event-loop turn, across all streams, ms. */
export const TURN_BUDGET_MS = 2;

/**
 * Producers resumed at once at the start of a turn, at least. Resumed together, producers
 * share the budget one event at a time, so with 32 of them each stream's batch held a few
 * events, and every batch costs a store write, a socket write and a flush of its own.
 * Fewer at once, each gets a larger batch; one that yields makes room for the next.
 */
export const MIN_PRODUCERS_AT_ONCE = 8;
const MAX_RUNNING = 1 << 16;

/**
 * The turn budget of the producers that share one event loop. One per process is the
 * point (the loop is the process's); `ProcessState` (`./process.ts`) holds the shared one.
 */
export class Turns {
  /** When the current turn's budget started; -1 when no producer has run since the last release. */
  #budgetStart = -1;
  #scheduled = false;
  /** Work for the next turn, run before producers resume. */
  #tasks: Array<() => void> = [];
  /** When the oldest of `tasks` was queued. */
  #tasksSince = 0;
  /** Cut short by the shared budget: released first. */
  #starved: Array<() => void> = [];
  /** Reached their own bound. */
  #own: Array<() => void> = [];
  /** Producers resumed at once this turn: doubles while the budget goes unused, halves when it is spent. */
  #running = MIN_PRODUCERS_AT_ONCE;
  /** Producers due this turn and not yet resumed, in order. */
  #ready: Array<() => void> = [];

  /** Runs `task` on the next turn, before the producers waiting for it. */
  atNextTurn(task: () => void): void {
    if (this.#tasks.length === 0) this.#tasksSince = performance.now();
    this.#tasks.push(task);
    this.#schedule();
  }

  /**
   * Runs the work queued for the next turn now, if the oldest of it has waited a whole
   * budget: a batch closes on time even while the current turn is busy with other I/O.
   * Producers waiting for the next turn still wait for it.
   */
  runOverdue(now: number = performance.now()): void {
    if (this.#tasks.length > 0 && now - this.#tasksSince >= TURN_BUDGET_MS) this.#runTasks();
  }

  /** Starts the turn's clock on the first append of a turn; true once the budget is spent. */
  turnBudgetSpent(): boolean {
    const now = performance.now();
    this.runOverdue(now);
    if (this.#budgetStart < 0) {
      this.#budgetStart = now;
      this.#schedule();
      return false;
    }
    return now - this.#budgetStart >= TURN_BUDGET_MS;
  }

  /**
   * Resolves on the next turn, after its {@link atNextTurn} tasks. `starved`: the shared
   * budget, not the caller's own bound, cut it short.
   */
  nextTurn(isStarved: boolean): Promise<void> {
    this.#schedule();
    const yielded = new Promise<void>((resolve) => (isStarved ? this.#starved : this.#own).push(resolve));
    // A producer done for this turn makes room for one that has not run yet, while the budget lasts.
    if (this.#ready.length > 0 && !this.#budgetSpent(performance.now())) this.#releaseNext();
    return yielded;
  }

  /** Has a producer started this turn's budget, and used it up by `now`? */
  #budgetSpent(now: number): boolean {
    return this.#budgetStart >= 0 && now - this.#budgetStart >= TURN_BUDGET_MS;
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    queueMacrotask(this.#release);
  }

  #runTasks(): void {
    const work = this.#tasks;
    this.#tasks = [];
    for (const task of work) task();
  }

  #releaseNext(): void {
    const next = this.#ready.shift();
    if (next) next();
  }

  readonly #release = (): void => {
    const spent = this.#budgetSpent(performance.now());
    // Producers left waiting while the budget went unused (the ones that ran finished early):
    // let more run at once. A spent budget: fewer at once, each with a larger batch.
    if (spent) this.#running = Math.max(MIN_PRODUCERS_AT_ONCE, this.#running / 2);
    else if (this.#ready.length > 0) this.#running = Math.min(MAX_RUNNING, this.#running * 2);
    this.#scheduled = false;
    this.#budgetStart = -1;
    this.#runTasks();
    // Those left waiting last turn go first, then the starved, then those at their own bound.
    this.#ready = [...this.#ready, ...this.#starved, ...this.#own];
    this.#starved = [];
    this.#own = [];
    for (let i = 0; i < this.#running && this.#ready.length > 0; i++) this.#releaseNext();
    if (this.#ready.length > 0) this.#schedule();
  };
}
