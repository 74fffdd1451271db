/** The upgrade state machine under arbitrary input sequences. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { UPGRADE_INPUTS, transition, type UpgradeState } from '../../src/server/upgrade/state.js';

const inputs = fc.array(fc.constantFrom(...UPGRADE_INPUTS), { maxLength: 40 });

function walk(sequence: readonly (typeof UPGRADE_INPUTS)[number][]) {
  let state: UpgradeState = 'sse-active';
  const steps = [];
  for (const input of sequence) {
    const t = transition(state, input);
    steps.push({ from: state, input, ...t });
    state = t.state;
  }
  return steps;
}

test('superseded is terminal, and everything after it is refused', () => {
  fc.assert(
    fc.property(inputs, (sequence) => {
      let over = false;
      for (const s of walk(sequence)) {
        if (over) {
          assert.equal(s.state, 'superseded');
          assert.equal(s.action, 'refuse-superseded');
        }
        if (s.state === 'superseded') over = true;
      }
    }),
  );
});

test('a resume never proceeds once an offer was made (seed 003: no idle stream, no replay as if nothing happened)', () => {
  fc.assert(
    fc.property(inputs, (sequence) => {
      let offered = false;
      for (const s of walk(sequence)) {
        if (s.action === 'offer') offered = true;
        if (offered && (s.input === 'resume' || s.input === 'standalone')) assert.notEqual(s.action, 'proceed');
      }
    }),
  );
});

test('the socket is accepted at most once per session, and only from upgrade-pending with the right token', () => {
  fc.assert(
    fc.property(inputs, (sequence) => {
      const accepts = walk(sequence).filter((s) => s.action === 'accept');
      assert.ok(accepts.length <= 1);
      for (const a of accepts) {
        assert.equal(a.from, 'upgrade-pending');
        assert.equal(a.input, 'handshake');
      }
    }),
  );
});

test('at most one offer per session', () => {
  fc.assert(fc.property(inputs, (sequence) => assert.ok(walk(sequence).filter((s) => s.action === 'offer').length <= 1)));
});
