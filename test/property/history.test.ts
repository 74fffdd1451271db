/** The fault harness's history checker: counts what it should, and nothing else. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { checkHistory, isZero } from '../faults/harness/check.js';

const seqs = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1);

test('exactly-once, in-order delivery counts zero; any complete prefix of a refused run counts zero', () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 200 }), fc.integer({ min: 0, max: 200 }), (n, k) => {
      assert.ok(isZero(checkHistory(n, seqs(n), true)));
      assert.ok(isZero(checkHistory(n, seqs(Math.min(n, k)), false)));
    }),
  );
});

test('every kind of fault is counted', () => {
  fc.assert(
    fc.property(fc.integer({ min: 3, max: 100 }), fc.nat(), (n, r) => {
      const i = 1 + (r % (n - 2)); // an inner position
      const dropped = seqs(n).filter((s) => s !== i);
      assert.equal(checkHistory(n, dropped, false).lost, 1, 'a hole is lost even in a refused run');
      assert.equal(checkHistory(n, seqs(n - 1), true).lost, 1, 'a missing tail is lost when the run claims success');
      assert.equal(checkHistory(n, [...seqs(n), i], true).duplicated, 1);
      const swapped = seqs(n);
      [swapped[i - 1], swapped[i]] = [swapped[i] as number, swapped[i - 1] as number];
      assert.equal(checkHistory(n, swapped, true).reordered, 1);
      assert.equal(checkHistory(n, [...seqs(n), n + 1, 0], true).unexpected, 2);
    }),
  );
});
