/**
 * The tail's phase machine, tested against a table written out here by hand (nothing below
 * reads the implementation's table to decide what is expected). The tail itself, following
 * a stream another replica writes, is tested in test/cluster/.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  owesHead,
  owesPass,
  TAIL_INPUTS,
  TAIL_PHASES,
  tailReading,
  tailTransition,
  type TailInput,
  type TailPhase,
} from '../../src/server/stream/tail-phase.js';

// `Record` types: a phase or input added to the machine and not here is a compile error.
const PHASES: Record<TailPhase, true> = { idle: true, 'idle-head': true, reading: true, 'reading-head': true, again: true, 'again-head': true, stopped: true };
const INPUTS: Record<TailInput, true> = { wake: true, 'head-owed': true, pass: true, 'head-read': true, 'closed-unread': true, rest: true, stop: true };

/** Every legal transition; every pair not listed must be refused. */
const LEGAL: ReadonlyArray<readonly [TailPhase, TailInput, TailPhase]> = [
  ['idle', 'wake', 'reading'],
  ['idle', 'head-owed', 'idle-head'],
  ['idle', 'stop', 'stopped'],
  ['idle-head', 'wake', 'reading-head'],
  ['idle-head', 'head-owed', 'idle-head'],
  ['idle-head', 'stop', 'stopped'],
  ['reading', 'wake', 'again'],
  ['reading', 'head-owed', 'reading-head'],
  ['reading', 'pass', 'reading'],
  ['reading', 'closed-unread', 'again-head'],
  ['reading', 'rest', 'idle'],
  ['reading', 'stop', 'stopped'],
  ['reading-head', 'wake', 'again-head'],
  ['reading-head', 'head-owed', 'reading-head'],
  ['reading-head', 'pass', 'reading-head'],
  ['reading-head', 'head-read', 'reading'],
  ['reading-head', 'closed-unread', 'again-head'],
  ['reading-head', 'rest', 'idle-head'],
  ['reading-head', 'stop', 'stopped'],
  ['again', 'wake', 'again'],
  ['again', 'head-owed', 'again-head'],
  ['again', 'pass', 'reading'],
  ['again', 'closed-unread', 'again-head'],
  ['again', 'stop', 'stopped'],
  ['again-head', 'wake', 'again-head'],
  ['again-head', 'head-owed', 'again-head'],
  ['again-head', 'pass', 'reading-head'],
  ['again-head', 'head-read', 'again'],
  ['again-head', 'closed-unread', 'again-head'],
  ['again-head', 'stop', 'stopped'],
];

describe('tail phase table', () => {
  it('lists every phase and input', () => {
    assert.deepEqual([...TAIL_PHASES].sort(), Object.keys(PHASES).sort());
    assert.deepEqual([...TAIL_INPUTS].sort(), Object.keys(INPUTS).sort());
  });

  for (const [phase, input, next] of LEGAL) {
    it(`${phase} --${input}--> ${next}`, () => {
      assert.equal(tailTransition(phase, input), next);
    });
  }

  it('refuses every other (phase, input) pair', () => {
    let refused = 0;
    for (const phase of Object.keys(PHASES) as TailPhase[]) {
      for (const input of Object.keys(INPUTS) as TailInput[]) {
        if (LEGAL.some(([p, i]) => p === phase && i === input)) continue;
        assert.equal(tailTransition(phase, input), undefined, `${phase} --${input}--> must be refused`);
        refused++;
      }
    }
    assert.equal(refused, 49 - LEGAL.length);
  });

  it('has a terminal phase that nothing leaves, reachable from every other', () => {
    for (const input of Object.keys(INPUTS) as TailInput[]) assert.equal(tailTransition('stopped', input), undefined);
    for (const phase of Object.keys(PHASES) as TailPhase[]) {
      if (phase !== 'stopped') assert.equal(tailTransition(phase, 'stop'), 'stopped');
    }
  });

  it('never rests while a pass is owed, and a wake-up while reading owes one', () => {
    for (const phase of Object.keys(PHASES) as TailPhase[]) {
      if (owesPass(phase)) assert.equal(tailTransition(phase, 'rest'), undefined, `${phase} must not rest`);
      const woken = tailTransition(phase, 'wake');
      if (tailReading(phase)) assert.ok(woken !== undefined && owesPass(woken), `${phase} --wake--> owes a pass`);
    }
  });

  it('keeps an owed head read until it is read, whatever else happens', () => {
    for (const phase of Object.keys(PHASES) as TailPhase[]) {
      if (!owesHead(phase)) continue;
      for (const input of ['wake', 'head-owed', 'pass', 'closed-unread', 'rest'] as const) {
        const next = tailTransition(phase, input);
        if (next !== undefined) assert.ok(owesHead(next), `${phase} --${input}--> ${next} forgets the head`);
      }
      const read = tailTransition(phase, 'head-read');
      if (read !== undefined) assert.ok(!owesHead(read));
    }
  });
});
