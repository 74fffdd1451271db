/** The shared producer budget: a yield resolves on a later turn, and producers cut short by the budget go first. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { atNextTurn, nextTurn, runOverdue, TURN_BUDGET_MS, turnBudgetSpent } from '../../src/server/turns.js';

describe('turn budget', () => {
  it('a fresh turn has budget left; a yield resolves after the work queued for the next turn', async () => {
    await nextTurn(false); // start from a clean turn
    assert.equal(turnBudgetSpent(), false);
    const order: string[] = [];
    const yielded = nextTurn(false).then(() => order.push('resumed'));
    atNextTurn(() => order.push('queued work'));
    await yielded;
    assert.deepEqual(order, ['queued work', 'resumed']);
  });

  it('a yield lets other macrotasks run', async () => {
    const order: string[] = [];
    setImmediate(() => order.push('queued before'));
    await nextTurn(false);
    order.push('resumed');
    assert.deepEqual(order, ['queued before', 'resumed']);
  });

  it('producers cut short by the shared budget are released before those that reached their own bound', async () => {
    const order: string[] = [];
    const own = nextTurn(false).then(() => order.push('own bound'));
    const starved = nextTurn(true).then(() => order.push('starved'));
    await Promise.all([own, starved]);
    assert.deepEqual(order, ['starved', 'own bound']);
  });

  it('queued work runs before the next turn once it has waited a whole budget, and not before', async () => {
    await nextTurn(false);
    const ran: string[] = [];
    atNextTurn(() => ran.push('flush'));
    const queuedAt = performance.now();
    runOverdue(queuedAt);
    assert.deepEqual(ran, [], 'not overdue yet');
    // A busy turn: other requests' work holds the loop past the budget.
    runOverdue(queuedAt + TURN_BUDGET_MS);
    assert.deepEqual(ran, ['flush'], 'overdue work runs now, inside the busy turn');
    await nextTurn(false);
    assert.deepEqual(ran, ['flush'], 'and only once');
  });

  it('an append in a busy turn runs the overdue work before its own', async () => {
    await nextTurn(false);
    const ran: string[] = [];
    atNextTurn(() => ran.push('flush'));
    const start = performance.now();
    // Condition, not a sleep: the clock passes the budget within this synchronous turn.
    while (performance.now() - start < TURN_BUDGET_MS) { /* busy */ }
    turnBudgetSpent();
    assert.deepEqual(ran, ['flush']);
    await nextTurn(false);
  });
});
