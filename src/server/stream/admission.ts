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

/** Request handling started per event-loop turn before further requests wait a turn, ms. */
export const REQUEST_BUDGET_MS = 2;

/** When the current turn's first request started; -1 once the turn has ended. */
let turnStart = -1;
let turnEndQueued = false;
/** Requests waiting for a turn, oldest first; each has one pending {@link pump}. */
const waiting: Array<() => void> = [];

/** Ends the current turn after the work queued so far (an immediate runs after the poll phase). */
function endTurnSoon(): void {
  if (turnEndQueued) return;
  turnEndQueued = true;
  setImmediate(() => {
    turnEndQueued = false;
    turnStart = -1;
  });
}

/**
 * One waiting request's chance to start. Each runs as its own immediate, so the request it
 * starts runs (to its first I/O wait) before the next pump measures the turn.
 */
function pump(): void {
  const now = performance.now();
  if (turnStart < 0) {
    turnStart = now;
    endTurnSoon();
  } else if (now - turnStart >= REQUEST_BUDGET_MS) {
    // Spent: try again on the next turn, after that turn's reset.
    endTurnSoon();
    setImmediate(pump);
    return;
  }
  waiting.shift()?.();
}

/**
 * Call before handling a request: `undefined` when it may start now, else a promise that
 * resolves when its turn comes. Never rejects.
 */
export function admit(): Promise<void> | undefined {
  if (waiting.length === 0) {
    const now = performance.now();
    if (turnStart < 0) {
      turnStart = now;
      endTurnSoon();
      return undefined;
    }
    if (now - turnStart < REQUEST_BUDGET_MS) return undefined;
  }
  const turn = new Promise<void>((resolve) => waiting.push(resolve));
  setImmediate(pump);
  return turn;
}
