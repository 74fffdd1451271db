/**
 * The history checker, in the manner of Jepsen's queue checkers: what the application was
 * handed against what the server produced. Pure.
 *
 * - lost: produced, not delivered, and nothing said so — a hole below the highest
 *   delivered event, or a missing tail when the run claims success;
 * - duplicated: delivered more than once;
 * - reordered: delivered after a later event;
 * - unexpected: delivered but never produced (another run's, another session's, junk).
 *
 * A run that ends in an explicit, typed refusal may miss its tail: that is the refusal
 * doing its job, not a loss. A hole is never excused.
 */

export interface Counts {
  lost: number;
  duplicated: number;
  reordered: number;
  unexpected: number;
}

export const ZERO: Counts = { lost: 0, duplicated: 0, reordered: 0, unexpected: 0 };

/**
 * `produced` are the sequence numbers 1..produced; `delivered` what the application got,
 * in order; `complete` whether the run claims everything was delivered.
 */
export function checkHistory(produced: number, delivered: readonly number[], complete: boolean): Counts {
  const seen = new Set<number>();
  let duplicated = 0;
  let reordered = 0;
  let unexpected = 0;
  let highest = 0;
  for (const seq of delivered) {
    if (!Number.isInteger(seq) || seq < 1 || seq > produced) {
      unexpected++;
      continue;
    }
    if (seen.has(seq)) duplicated++;
    else if (seq < highest) reordered++;
    seen.add(seq);
    highest = Math.max(highest, seq);
  }
  const until = complete ? produced : highest;
  let lost = 0;
  for (let seq = 1; seq <= until; seq++) if (!seen.has(seq)) lost++;
  return { lost, duplicated, reordered, unexpected };
}

export function addCounts(a: Counts, b: Counts): Counts {
  return { lost: a.lost + b.lost, duplicated: a.duplicated + b.duplicated, reordered: a.reordered + b.reordered, unexpected: a.unexpected + b.unexpected };
}

export function isZero(c: Counts): boolean {
  return c.lost === 0 && c.duplicated === 0 && c.reordered === 0 && c.unexpected === 0;
}
