/** The shared producer budget: a yield resolves on a later turn, and producers cut short by the budget go first. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MIN_PRODUCERS_AT_ONCE, TURN_BUDGET_MS, Turns } from '../../src/server/stream/turns.js';

describe('turn budget', () => {
  // Its own instance: no stream of this process shares its turns.
  const turns = new Turns();
  it('a fresh turn has budget left; a yield resolves after the work queued for the next turn', async () => {
    await turns.nextTurn(false); // start from a clean turn
    assert.equal(turns.turnBudgetSpent(), false);
    const order: string[] = [];
    const yielded = turns.nextTurn(false).then(() => order.push('resumed'));
    turns.atNextTurn(() => order.push('queued work'));
    await yielded;
    assert.deepEqual(order, ['queued work', 'resumed']);
  });

  it('a yield lets other macrotasks run', async () => {
    const order: string[] = [];
    setImmediate(() => order.push('queued before'));
    await turns.nextTurn(false);
    order.push('resumed');
    assert.deepEqual(order, ['queued before', 'resumed']);
  });

  it('producers cut short by the shared budget are released before those that reached their own bound', async () => {
    const order: string[] = [];
    const own = turns.nextTurn(false).then(() => order.push('own bound'));
    const starved = turns.nextTurn(true).then(() => order.push('starved'));
    await Promise.all([own, starved]);
    assert.deepEqual(order, ['starved', 'own bound']);
  });

  it('queued work runs before the next turn once it has waited a whole budget, and not before', async () => {
    await turns.nextTurn(false);
    const ran: string[] = [];
    turns.atNextTurn(() => ran.push('flush'));
    const queuedAt = performance.now();
    turns.runOverdue(queuedAt);
    assert.deepEqual(ran, [], 'not overdue yet');
    // A busy turn: other requests' work holds the loop past the budget.
    turns.runOverdue(queuedAt + TURN_BUDGET_MS);
    assert.deepEqual(ran, ['flush'], 'overdue work runs now, inside the busy turn');
    await turns.nextTurn(false);
    assert.deepEqual(ran, ['flush'], 'and only once');
  });

  it('an append in a busy turn runs the overdue work before its own', async () => {
    await turns.nextTurn(false);
    const ran: string[] = [];
    turns.atNextTurn(() => ran.push('flush'));
    const start = performance.now();
    // Condition, not a sleep: the clock passes the budget within this synchronous turn.
    while (performance.now() - start < TURN_BUDGET_MS) {
      /* busy */
    }
    turns.turnBudgetSpent();
    assert.deepEqual(ran, ['flush']);
    await turns.nextTurn(false);
  });
  it('a turn resumes a few producers at once; one that yields makes room for the next while the budget lasts; the rest go first next turn', async () => {
    // This file's process starts with the fewest at once (the number adapts only when
    // producers are left waiting, which no test above does).
    await turns.nextTurn(false);
    const K = MIN_PRODUCERS_AT_ONCE;
    const resumed: number[] = [];
    const order: string[] = [];
    const waits = Array.from({ length: K + 2 }, (_, i) =>
      turns.nextTurn(false).then(() => {
        resumed.push(i);
        if (i === K + 1) order.push('left over');
      }),
    );
    await waits[0];
    assert.deepEqual(
      resumed,
      Array.from({ length: K }, (_, i) => i),
      'the first K, not all',
    );
    // One of them is done for this turn: the next waiting producer runs now.
    const yielded = turns.nextTurn(false).then(() => void order.push('yielded'));
    await waits[K];
    assert.deepEqual(
      resumed,
      Array.from({ length: K + 1 }, (_, i) => i),
      'one more, in this turn',
    );
    // The budget spent: a producer that yields now makes room for no one.
    turns.turnBudgetSpent();
    const start = performance.now();
    while (performance.now() - start < TURN_BUDGET_MS) {
      /* busy: the clock passes the budget */
    }
    assert.equal(turns.turnBudgetSpent(), true);
    const starved = turns.nextTurn(true).then(() => void order.push('starved'));
    for (let i = 0; i < 10; i++) await Promise.resolve();
    assert.equal(resumed.includes(K + 1), false, 'the last waits for the next turn');
    await Promise.all([yielded, starved, waits[K + 1]]);
    assert.deepEqual(order, ['left over', 'starved', 'yielded'], 'left over first, then the starved, then the rest');
  });
});
