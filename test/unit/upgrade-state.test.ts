import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  UPGRADE_INPUTS,
  UPGRADE_STATES,
  transition,
  type Transition,
  type UpgradeAction,
  type UpgradeInput,
  type UpgradeState,
} from '../../src/server/upgrade/state.js';
import { prng as mulberry32 } from '../helpers/prng.js';

/*
 * The SSE→WebSocket upgrade state machine (seed 003, DESIGN §5), tested against a table
 * written out here by hand: nothing below reads the implementation's table to decide what
 * is expected. The `Record` types make a missing state, input or action a compile error.
 */

const STATES: Record<UpgradeState, true> = {
  'sse-active': true,
  'upgrade-pending': true,
  upgraded: true,
  superseded: true,
};

const INPUTS: Record<UpgradeInput, true> = {
  offer: true,
  handshake: true,
  'bad-token': true,
  'expired-token': true,
  timeout: true,
  resume: true,
  standalone: true,
  post: true,
  'ws-closed': true,
};

const ACTIONS: Record<UpgradeAction, true> = {
  proceed: true,
  offer: true,
  accept: true,
  'refuse-pending': true,
  supersede: true,
  'refuse-superseded': true,
};

const ALL_STATES = Object.keys(STATES) as UpgradeState[];
const ALL_INPUTS = Object.keys(INPUTS) as UpgradeInput[];

type Expect = readonly [UpgradeState, UpgradeAction];

/** What each (state, input) must give, with the reason when it is not obvious. */
const EXPECTED: Record<UpgradeState, Record<UpgradeInput, Expect>> = {
  'sse-active': {
    offer: ['upgrade-pending', 'offer'],
    // No upgrade was offered, so there is no handshake to complete; DESIGN §5 ends the
    // session for a handshake that is not the one pending offer's.
    handshake: ['superseded', 'supersede'],
    'bad-token': ['superseded', 'supersede'],
    'expired-token': ['superseded', 'supersede'],
    // No timer can be live here: a stale one is a no-op.
    timeout: ['sse-active', 'proceed'],
    // Ordinary Last-Event-ID resumption: seed 003's condition (1) (a durable
    // upgrade-accepted) does not hold.
    resume: ['sse-active', 'proceed'],
    standalone: ['sse-active', 'proceed'],
    post: ['sse-active', 'proceed'],
    // No socket exists: nothing to do.
    'ws-closed': ['sse-active', 'proceed'],
  },
  'upgrade-pending': {
    // No dual negotiation: never a second upgrade-accepted.
    offer: ['superseded', 'supersede'],
    handshake: ['upgraded', 'accept'],
    'bad-token': ['superseded', 'supersede'],
    'expired-token': ['superseded', 'supersede'],
    timeout: ['superseded', 'supersede'],
    // Seed 003: (1) upgrade-accepted durable ∧ (2) no Sec-WebSocket-Accept ∧ (3) a resume.
    resume: ['superseded', 'supersede'],
    // Outbound messages now go to the socket's stream: a fresh SSE stream would be the
    // idle stream (deadlock) seed 003 forbids.
    standalone: ['superseded', 'supersede'],
    // Retryable 409 while the client switches transports; the session stays.
    post: ['upgrade-pending', 'refuse-pending'],
    // No socket is adopted before the handshake: nothing to do; the timer still runs.
    'ws-closed': ['upgrade-pending', 'proceed'],
  },
  upgraded: {
    offer: ['superseded', 'supersede'],
    // A second handshake for the same session.
    handshake: ['superseded', 'supersede'],
    'bad-token': ['superseded', 'supersede'],
    'expired-token': ['superseded', 'supersede'],
    // A timer that raced the handshake must not undo a completed upgrade.
    timeout: ['upgraded', 'proceed'],
    // Seed 003: no replay as if no upgrade happened.
    resume: ['superseded', 'supersede'],
    standalone: ['superseded', 'supersede'],
    // Never two live transports.
    post: ['superseded', 'supersede'],
    // The only transport is gone and nothing can resume it.
    'ws-closed': ['superseded', 'supersede'],
  },
  superseded: {
    // Terminal; and never 'supersede' again (the session already ended once).
    offer: ['superseded', 'refuse-superseded'],
    handshake: ['superseded', 'refuse-superseded'],
    'bad-token': ['superseded', 'refuse-superseded'],
    'expired-token': ['superseded', 'refuse-superseded'],
    timeout: ['superseded', 'refuse-superseded'],
    resume: ['superseded', 'refuse-superseded'],
    standalone: ['superseded', 'refuse-superseded'],
    post: ['superseded', 'refuse-superseded'],
    'ws-closed': ['superseded', 'refuse-superseded'],
  },
};

const show = (s: UpgradeState, i: UpgradeInput, t: Transition | undefined): string =>
  `transition(${s}, ${i}) = ${t === undefined ? 'undefined' : `{ state: ${String(t.state)}, action: ${String(t.action)} }`}`;

const SEED = Number(process.env.UPGRADE_STATE_SEED ?? 0x2fa708dd) >>> 0;
const WALK_STEPS = 10_000;

describe('upgrade-state: the full (state, input) table', () => {
  for (const state of ALL_STATES) {
    for (const input of ALL_INPUTS) {
      const [next, action] = EXPECTED[state][input];
      it(`${state} + ${input} → ${next} / ${action}`, () => {
        const t = transition(state, input) as Transition | undefined;
        assert.ok(t !== undefined && t !== null, `${show(state, input, t)}: every pair must be defined`);
        assert.equal(t.state, next, `${show(state, input, t)}: expected next state ${next}`);
        assert.equal(t.action, action, `${show(state, input, t)}: expected action ${action}`);
      });
    }
  }
});

describe('upgrade-state: properties that hold whatever the table says', () => {
  it('UPGRADE_STATES lists exactly the 4 states, once each', () => {
    assert.equal(UPGRADE_STATES.length, 4, `UPGRADE_STATES = ${JSON.stringify(UPGRADE_STATES)}`);
    assert.equal(new Set(UPGRADE_STATES).size, UPGRADE_STATES.length, `duplicates in ${JSON.stringify(UPGRADE_STATES)}`);
    assert.deepEqual([...UPGRADE_STATES].sort(), [...ALL_STATES].sort(), `UPGRADE_STATES = ${JSON.stringify(UPGRADE_STATES)}`);
  });

  it('UPGRADE_INPUTS lists exactly the 9 inputs, once each', () => {
    assert.equal(UPGRADE_INPUTS.length, 9, `UPGRADE_INPUTS = ${JSON.stringify(UPGRADE_INPUTS)}`);
    assert.equal(new Set(UPGRADE_INPUTS).size, UPGRADE_INPUTS.length, `duplicates in ${JSON.stringify(UPGRADE_INPUTS)}`);
    assert.deepEqual([...UPGRADE_INPUTS].sort(), [...ALL_INPUTS].sort(), `UPGRADE_INPUTS = ${JSON.stringify(UPGRADE_INPUTS)}`);
  });

  it('every pair is defined, with a known state and action, and the same answer twice', () => {
    let pairs = 0;
    for (const state of UPGRADE_STATES) {
      for (const input of UPGRADE_INPUTS) {
        const t = transition(state, input) as Transition | undefined;
        assert.ok(t !== undefined && t !== null, `${show(state, input, t)}: undefined`);
        assert.ok(Object.hasOwn(STATES, t.state), `${show(state, input, t)}: unknown state`);
        assert.ok(Object.hasOwn(ACTIONS, t.action), `${show(state, input, t)}: unknown action`);
        assert.deepEqual(transition(state, input), t, `${show(state, input, t)}: not a pure function`);
        pairs++;
      }
    }
    assert.equal(pairs, 36, `expected 4 × 9 = 36 pairs, saw ${pairs}`);
  });

  it('superseded is terminal: every input keeps it, and never proceeds, offers or accepts', () => {
    for (const input of ALL_INPUTS) {
      const t = transition('superseded', input);
      assert.equal(t.state, 'superseded', `${show('superseded', input, t)}: left superseded`);
      for (const forbidden of ['proceed', 'offer', 'accept'] as const) {
        assert.notEqual(t.action, forbidden, `${show('superseded', input, t)}: '${forbidden}' in a terminal state`);
      }
    }
  });

  it("the only way into upgraded is handshake from upgrade-pending, with 'accept'", () => {
    for (const state of ALL_STATES) {
      for (const input of ALL_INPUTS) {
        const t = transition(state, input);
        const entry = state !== 'upgraded' && t.state === 'upgraded';
        const isTheWay = state === 'upgrade-pending' && input === 'handshake';
        assert.equal(entry, isTheWay, `${show(state, input, t)}: entry into upgraded must be exactly pending + handshake`);
        if (isTheWay) assert.equal(t.action, 'accept', `${show(state, input, t)}: entering upgraded must 'accept'`);
        // 'accept' writes a 101: only ever on that one entry.
        if (t.action === 'accept') assert.ok(isTheWay, `${show(state, input, t)}: 'accept' outside pending + handshake`);
      }
    }
  });

  it('the only way into upgrade-pending is offer from sse-active', () => {
    for (const state of ALL_STATES) {
      for (const input of ALL_INPUTS) {
        const t = transition(state, input);
        const entry = state !== 'upgrade-pending' && t.state === 'upgrade-pending';
        const isTheWay = state === 'sse-active' && input === 'offer';
        assert.equal(entry, isTheWay, `${show(state, input, t)}: entry into upgrade-pending must be exactly sse-active + offer`);
        if (isTheWay) assert.equal(t.action, 'offer', `${show(state, input, t)}: entering upgrade-pending must 'offer'`);
        // 'offer' mints upgrade-accepted: only ever on that one entry (no dual negotiation).
        if (t.action === 'offer') assert.ok(isTheWay, `${show(state, input, t)}: 'offer' outside sse-active + offer`);
      }
    }
  });

  it('seed 003: resume in upgrade-pending or upgraded supersedes, never proceeds', () => {
    for (const state of ['upgrade-pending', 'upgraded'] as const) {
      const t = transition(state, 'resume');
      // 'proceed' would be the idle stream (deadlock) or the replay as if no upgrade happened;
      // 'offer' would be the second upgrade-accepted; 'refuse-pending' leaves the session alive.
      assert.notEqual(t.action, 'proceed', `${show(state, 'resume', t)}: resume must not proceed`);
      assert.notEqual(t.action, 'offer', `${show(state, 'resume', t)}: resume must not mint upgrade-accepted`);
      assert.equal(t.action, 'supersede', `${show(state, 'resume', t)}: resume must supersede`);
      assert.equal(t.state, 'superseded', `${show(state, 'resume', t)}: resume must end the session`);
    }
  });

  it('a second offer in upgrade-pending or upgraded never offers again', () => {
    for (const state of ['upgrade-pending', 'upgraded'] as const) {
      const t = transition(state, 'offer');
      assert.notEqual(t.action, 'offer', `${show(state, 'offer', t)}: dual negotiation`);
      assert.notEqual(t.action, 'accept', `${show(state, 'offer', t)}: an offer is not a handshake`);
    }
  });

  it("'supersede' is exactly a move into superseded; 'refuse-superseded' only once there", () => {
    for (const state of ALL_STATES) {
      for (const input of ALL_INPUTS) {
        const t = transition(state, input);
        const ending = state !== 'superseded' && t.state === 'superseded';
        // The session is terminated exactly once: on the move, never again afterwards.
        assert.equal(t.action === 'supersede', ending, `${show(state, input, t)}: 'supersede' iff the session ends here`);
        if (t.action === 'refuse-superseded') {
          assert.equal(state, 'superseded', `${show(state, input, t)}: 'refuse-superseded' for a live session`);
        }
        if (t.action === 'refuse-pending') {
          assert.ok(state === 'upgrade-pending' && t.state === 'upgrade-pending', `${show(state, input, t)}: 'refuse-pending' outside upgrade-pending`);
        }
      }
    }
  });
});

describe(`upgrade-state: random walks (seed ${SEED}, UPGRADE_STATE_SEED to override)`, () => {
  const pick = (rand: () => number): UpgradeInput => {
    const input = ALL_INPUTS[Math.floor(rand() * ALL_INPUTS.length)];
    assert.ok(input !== undefined, `seed ${SEED}: PRNG out of range`);
    return input;
  };

  /**
   * Walks from sse-active: checks each step against EXPECTED and the invariants, and returns
   * which states were reached (so the walk is known to have exercised them).
   */
  function walk(rand: () => number, steps: number, label: string, reached: Set<UpgradeState>): void {
    let state: UpgradeState = 'sse-active';
    let offered = false; // an offer moved sse-active to upgrade-pending earlier in this walk
    let entered = -1; // the step at which superseded was entered
    const trail: string[] = [];
    for (let step = 0; step < steps; step++) {
      const input: UpgradeInput = pick(rand);
      const t: Transition = transition(state, input);
      trail.push(input);
      if (trail.length > 12) trail.shift();
      const where: string = `seed ${SEED}, ${label}, step ${step}, ${show(state, input, t)}, recent inputs [${trail.join(', ')}]`;
      const want: Expect = EXPECTED[state][input];
      const wantState: UpgradeState = want[0];
      const wantAction: UpgradeAction = want[1];
      assert.equal(t.state, wantState, `${where}: expected state ${wantState}`);
      assert.equal(t.action, wantAction, `${where}: expected action ${wantAction}`);
      if (entered >= 0) assert.equal(t.state, 'superseded', `${where}: left superseded (entered at step ${entered})`);
      if (t.state === 'upgraded' && state !== 'upgraded') {
        assert.ok(offered, `${where}: upgraded without a preceding offer`);
        assert.ok(state === 'upgrade-pending' && input === 'handshake', `${where}: upgraded other than by handshake`);
      }
      if (state === 'sse-active' && t.state === 'upgrade-pending') offered = true;
      if (t.state === 'superseded' && entered < 0) entered = step;
      state = t.state;
      reached.add(state);
    }
  }

  it(`one walk of ${WALK_STEPS} steps from sse-active`, () => {
    const reached = new Set<UpgradeState>();
    walk(mulberry32(SEED), WALK_STEPS, 'single walk', reached);
    assert.ok(reached.has('superseded'), `seed ${SEED}: a ${WALK_STEPS}-step walk never reached superseded`);
  });

  it(`${WALK_STEPS} steps in short walks, each restarted at sse-active`, () => {
    const rand = mulberry32(SEED ^ 0x9e3779b9);
    const reached = new Set<UpgradeState>();
    let done = 0;
    let walks = 0;
    while (done < WALK_STEPS) {
      const steps = Math.min(1 + Math.floor(rand() * 24), WALK_STEPS - done);
      walk(rand, steps, `walk ${walks}`, reached);
      done += steps;
      walks++;
    }
    for (const state of ALL_STATES) {
      assert.ok(reached.has(state), `seed ${SEED}: ${walks} walks never reached ${state}`);
    }
  });
});
