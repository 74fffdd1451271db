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
 */

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

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  setImmediate(release);
}

function runTasks(): void {
  const work = tasks;
  tasks = [];
  for (const task of work) task();
}

function release(): void {
  scheduled = false;
  budgetStart = -1;
  runTasks();
  const first = starved;
  const then = own;
  starved = [];
  own = [];
  for (const resolve of first) resolve();
  for (const resolve of then) resolve();
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
  return new Promise((resolve) => (isStarved ? starved : own).push(resolve));
}
