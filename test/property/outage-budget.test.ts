/** The outage budget: however the waits and attempts fall, no wait ends past the bound, and a wait the server asks past it is not begun. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { OutageBudget } from '../../src/client/outage-budget.js';

const step = fc.record({
  /** How long the attempt took before it failed, ms. */
  attemptMs: fc.nat(500),
  /** The backoff (or the server's, capped) delay, ms. */
  delayMs: fc.nat(70_000),
  /** The server's `Retry-After`, uncapped, ms. */
  retryAfterMs: fc.option(fc.nat(10_000_000), { nil: undefined }),
});

test('the waits of a ride-through, each cut to what is left, never end past maxOutageMs after its first failure', () => {
  fc.assert(
    fc.property(fc.nat(200_000), fc.array(step, { minLength: 1, maxLength: 40 }), (maxMs, steps) => {
      let now = 1_000_000;
      const budget = new OutageBudget(maxMs, () => now);
      let first: number | undefined;
      for (const s of steps) {
        now += s.attemptMs;
        budget.failed();
        first ??= now;
        const wait = budget.next(s.delayMs, s.retryAfterMs);
        const left = maxMs - (now - first);
        if (wait === undefined) {
          assert.ok(left <= 0 || (s.retryAfterMs !== undefined && s.retryAfterMs > left), 'stopped with time left and nothing asked past it');
          return;
        }
        assert.ok(wait >= 0 && wait <= s.delayMs, `wait ${wait} of ${s.delayMs}`);
        now += wait;
        assert.ok(now - first <= maxMs, `waited ${now - first} ms of ${maxMs}`);
        if (s.retryAfterMs !== undefined) assert.ok(s.retryAfterMs <= left, 'waited for a server that asked past the bound');
      }
    }),
  );
});

test('the clock starts at the first failure, not before, and not again', () => {
  let now = 0;
  const budget = new OutageBudget(1000, () => now);
  now = 500;
  assert.equal(budget.spentMs, 0);
  assert.equal(budget.next(2000), 1000, 'a whole budget before any failure');
  budget.failed();
  now = 900;
  budget.failed();
  assert.equal(budget.spentMs, 400);
  assert.equal(budget.next(2000), 600);
  assert.equal(budget.next(100, 601), undefined, 'a Retry-After past what is left: no wait');
  now = 1500;
  assert.equal(budget.next(0), undefined);
});
