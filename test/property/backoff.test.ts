/** Reconnect delays and rows of divergences: floors, ceilings, and no zero. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { MAX_SERVER_RETRY_MS, reconnectDelay, resolveReconnect } from '../../src/client/backoff.js';
import { DivergenceRow } from '../../src/client/divergence-row.js';
import { ContinuityError } from '../../src/protocol/errors.js';

const options = fc.record({
  initialDelayMs: fc.integer({ min: 1, max: 1000 }),
  maxDelayMs: fc.integer({ min: 1, max: 60_000 }),
  factor: fc.double({ min: 1, max: 4, noNaN: true }),
});

test('a delay is at least half the backoff, at least the server retry (capped), and never more than the larger ceiling', () => {
  fc.assert(
    fc.property(
      options,
      fc.nat(40),
      fc.option(fc.nat(10_000_000), { nil: undefined }),
      fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
      (o, attempt, retry, r) => {
        const resolved = resolveReconnect(o);
        const delay = reconnectDelay(resolved, attempt, retry, () => r);
        const nominal = Math.min(o.maxDelayMs, o.initialDelayMs * o.factor ** attempt);
        assert.ok(delay >= Math.floor(nominal / 2), `${delay} < half of ${nominal}`);
        assert.ok(delay > 0, 'never zero');
        if (retry !== undefined) assert.ok(delay >= Math.min(retry, MAX_SERVER_RETRY_MS));
        assert.ok(delay <= Math.max(o.maxDelayMs, Math.min(retry ?? 0, MAX_SERVER_RETRY_MS)) + 1);
      },
    ),
  );
});

test('a row of divergences waits longer and longer, and stops at the limit; an answer or a quiet window ends it', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 10 }), fc.integer({ min: 1, max: 1000 }), (max, windowMs) => {
      const row = new DivergenceRow(resolveReconnect({ maxDivergences: max, divergenceWindowMs: windowMs, initialDelayMs: 10 }), () => 0.5);
      const error = new ContinuityError('gap');
      const now = 0;
      let previous = -1;
      for (let i = 1; i <= max; i++) {
        const step = row.diverged(error, now);
        assert.equal(step.consecutive, i);
        assert.equal(step.limit === undefined, i < max);
        assert.ok(i === 1 ? step.backoffMs === 0 : step.backoffMs > 0 && step.backoffMs >= previous);
        previous = step.backoffMs;
        row.reinitialized(now);
      }
      row.answered();
      assert.equal(row.diverged(error, now).consecutive, 1, 'an answered request ends the row');
      row.reinitialized(now);
      assert.equal(row.diverged(error, now + windowMs).consecutive, 1, 'a quiet window ends the row');
    }),
  );
});
