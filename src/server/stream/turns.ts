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

/** When the current turn's budget started; -1 when no producer has run since the last release. */
let budgetStart = -1;
let scheduled = false;
/** Work for the next turn, run before producers resume. */
let tasks: Array<() => void> = [];
/** When the oldest of `tasks` was queued. */
let tasksSince = 0;
/** Cut short by the shared budget: released first. */
let starved: Array<() => void> = [];
/** Reached their own bound. */
let own: Array<() => void> = [];

/** Has a producer started this turn's budget, and used it up by `now`? */
function budgetSpent(now: number): boolean {
  return budgetStart >= 0 && now - budgetStart >= TURN_BUDGET_MS;
}

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  queueMacrotask(release);
}

function runTasks(): void {
  const work = tasks;
  tasks = [];
  for (const task of work) task();
}

/**
 * Producers resumed at once at the start of a turn, at least. Resumed together, producers
 * share the budget one event at a time, so with 32 of them each stream's batch held a few
 * events, and every batch costs a store write, a socket write and a flush of its own.
 * Fewer at once, each gets a larger batch; one that yields makes room for the next.
 */
export const MIN_PRODUCERS_AT_ONCE = 8;
const MAX_RUNNING = 1 << 16;
/** Producers resumed at once this turn: doubles while the budget goes unused, halves when it is spent. */
let running = MIN_PRODUCERS_AT_ONCE;
/** Producers due this turn and not yet resumed, in order. */
let ready: Array<() => void> = [];

function releaseNext(): void {
  const next = ready.shift();
  if (next) next();
}

function release(): void {
  const spent = budgetSpent(performance.now());
  // Producers left waiting while the budget went unused (the ones that ran finished early):
  // let more run at once. A spent budget: fewer at once, each with a larger batch.
  if (spent) running = Math.max(MIN_PRODUCERS_AT_ONCE, running / 2);
  else if (ready.length > 0) running = Math.min(MAX_RUNNING, running * 2);
  scheduled = false;
  budgetStart = -1;
  runTasks();
  // Those left waiting last turn go first, then the starved, then those at their own bound.
  ready = [...ready, ...starved, ...own];
  starved = [];
  own = [];
  for (let i = 0; i < running && ready.length > 0; i++) releaseNext();
  if (ready.length > 0) schedule();
}

/** Runs `task` on the next turn, before the producers waiting for it. */
export function atNextTurn(task: () => void): void {
  if (tasks.length === 0) tasksSince = performance.now();
  tasks.push(task);
  schedule();
}

/**
 * Runs the work queued for the next turn now, if the oldest of it has waited a whole
 * budget: a batch closes on time even while the current turn is busy with other I/O.
 * Producers waiting for the next turn still wait for it.
 */
export function runOverdue(now: number = performance.now()): void {
  if (tasks.length > 0 && now - tasksSince >= TURN_BUDGET_MS) runTasks();
}

/** Starts the turn's clock on the first append of a turn; true once the budget is spent. */
export function turnBudgetSpent(): boolean {
  const now = performance.now();
  runOverdue(now);
  if (budgetStart < 0) {
    budgetStart = now;
    schedule();
    return false;
  }
  return now - budgetStart >= TURN_BUDGET_MS;
}

/**
 * Resolves on the next turn, after its {@link atNextTurn} tasks. `starved`: the shared budget, not the caller's own bound, cut it short.
 */
export function nextTurn(isStarved: boolean): Promise<void> {
  schedule();
  const yielded = new Promise<void>((resolve) => (isStarved ? starved : own).push(resolve));
  // A producer done for this turn makes room for one that has not run yet, while the budget lasts.
  if (ready.length > 0 && !budgetSpent(performance.now())) releaseNext();
  return yielded;
}
