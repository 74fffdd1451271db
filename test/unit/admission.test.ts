/** Request admission: requests beyond a turn's budget start on later turns, in arrival order, with other work in between. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Admission, REQUEST_BUDGET_MS } from '../../src/server/stream/admission.js';

/** Holds the thread for `ms` of the clock (a request's synchronous work): a condition, not a sleep. */
function work(ms: number): void {
  const start = performance.now();
  while (performance.now() - start < ms) {
    /* busy */
  }
}

/** Starts a fresh turn: the previous one's end has run. */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(() => setImmediate(resolve)));

describe('request admission', () => {
  // Its own instance: nothing else in this process admits requests through it.
  const admission = new Admission();
  it('requests start at once while the turn has budget', async () => {
    await nextTurn();
    assert.equal(admission.admit(), undefined);
    assert.equal(admission.admit(), undefined);
  });

  it('a storm of requests is spread over turns, in arrival order, with the rest of the loop running in between', async () => {
    await nextTurn();
    const started: number[] = [];
    const events: string[] = [];
    // Twenty requests arrive in one poll phase; each is a millisecond of synchronous work.
    const each = REQUEST_BUDGET_MS / 2;
    const handled: Array<Promise<void>> = [];
    for (let i = 0; i < 20; i++) {
      const turn = admission.admit();
      const run = (): void => {
        started.push(i);
        events.push(`request ${i}`);
        work(each);
      };
      if (turn === undefined) {
        run();
        handled.push(Promise.resolve());
      } else handled.push(turn.then(run));
    }
    // Other work queued in the same turn (a flush, a timer, another socket).
    setImmediate(() => events.push('other work'));
    await Promise.all(handled);
    assert.deepEqual(
      started,
      Array.from({ length: 20 }, (_, i) => i),
      'arrival order',
    );
    const other = events.indexOf('other work');
    assert.ok(other > 0 && other < 5, `the other work ran after ${other} requests, not after the whole storm`);
  });

  it('every waiting request starts eventually, even when each one spends a whole budget', async () => {
    await nextTurn();
    assert.equal(admission.admit(), undefined, "the turn's first request starts its clock");
    work(REQUEST_BUDGET_MS); // and spends the whole budget
    const turns = Array.from({ length: 5 }, () => admission.admit());
    assert.ok(
      turns.every((t) => t !== undefined),
      'all wait for a later turn',
    );
    let ran = 0;
    await Promise.all(
      turns.map((t) =>
        t.then(() => {
          ran++;
          work(REQUEST_BUDGET_MS);
        }),
      ),
    );
    assert.equal(ran, 5);
  });
});
