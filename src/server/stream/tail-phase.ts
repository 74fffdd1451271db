/**
 * The life of a tail (`./tail.ts`), as a pure state machine (the way `./phase.ts` spells out
 * an outbound stream's). One read loop runs at a time; a wake-up while it runs owes it
 * another pass instead of a second loop. The `-head` phases also owe a read of the head (is
 * the stream closed?): it is read only at the start and after a close notice, not once per
 * notice.
 *
 *   idle ──wake──▶ reading ──wake──▶ again
 *     ▲               │  ▲             │
 *     └─────rest──────┘  └────pass─────┘
 *
 *   head-owed: idle → idle-head, reading → reading-head, again → again-head
 *   head-read: reading-head → reading, again-head → again
 *   closed-unread (closed, events left to read): reading* and again* → again-head
 *   stop (from every phase but itself) ──▶ stopped (terminal)
 *
 * `wake`: there may be something to read (a notice, the subscription, the start). `pass`:
 * the loop begins a pass over the log, settling what it owed. `rest`: the loop ends, nothing
 * being owed. `stop`: the stream is closed and delivered, gone, the sink ended, or the store
 * failed.
 */

export type TailPhase = 'idle' | 'idle-head' | 'reading' | 'reading-head' | 'again' | 'again-head' | 'stopped';

export type TailInput = 'wake' | 'head-owed' | 'pass' | 'head-read' | 'closed-unread' | 'rest' | 'stop';

/** The next phase, or `undefined` where the input is refused (the phase stays). */
type Next = TailPhase | undefined;

/** Every (phase, input) pair, spelled out: no default branch can hide a missing case. */
const TABLE: Record<TailPhase, Record<TailInput, Next>> = {
  // Not reading: nothing to settle, the loop is not running to rest.
  idle: { wake: 'reading', 'head-owed': 'idle-head', pass: undefined, 'head-read': undefined, 'closed-unread': undefined, rest: undefined, stop: 'stopped' },
  'idle-head': {
    wake: 'reading-head',
    'head-owed': 'idle-head',
    pass: undefined,
    'head-read': undefined,
    'closed-unread': undefined,
    rest: undefined,
    stop: 'stopped',
  },
  reading: {
    wake: 'again',
    'head-owed': 'reading-head',
    pass: 'reading',
    'head-read': undefined,
    'closed-unread': 'again-head',
    rest: 'idle',
    stop: 'stopped',
  },
  'reading-head': {
    wake: 'again-head',
    'head-owed': 'reading-head',
    pass: 'reading-head',
    'head-read': 'reading',
    'closed-unread': 'again-head',
    rest: 'idle-head',
    stop: 'stopped',
  },
  // A pass is owed: the loop does not rest until it has made it.
  again: { wake: 'again', 'head-owed': 'again-head', pass: 'reading', 'head-read': undefined, 'closed-unread': 'again-head', rest: undefined, stop: 'stopped' },
  'again-head': {
    wake: 'again-head',
    'head-owed': 'again-head',
    pass: 'reading-head',
    'head-read': 'again',
    'closed-unread': 'again-head',
    rest: undefined,
    stop: 'stopped',
  },
  stopped: { wake: undefined, 'head-owed': undefined, pass: undefined, 'head-read': undefined, 'closed-unread': undefined, rest: undefined, stop: undefined },
};

export const TAIL_PHASES: readonly TailPhase[] = ['idle', 'idle-head', 'reading', 'reading-head', 'again', 'again-head', 'stopped'];
export const TAIL_INPUTS: readonly TailInput[] = ['wake', 'head-owed', 'pass', 'head-read', 'closed-unread', 'rest', 'stop'];

/** The phase after `input` in `phase`, or `undefined` if the input is refused there. */
export function tailTransition(phase: TailPhase, input: TailInput): TailPhase | undefined {
  return TABLE[phase][input];
}

/** Is the read loop running in `phase`? */
export function tailReading(phase: TailPhase): boolean {
  return phase === 'reading' || phase === 'reading-head' || phase === 'again' || phase === 'again-head';
}

/** Does `phase` owe the loop another pass? */
export function owesPass(phase: TailPhase): boolean {
  return phase === 'again' || phase === 'again-head';
}

/** Does `phase` owe a read of the stream's head? */
export function owesHead(phase: TailPhase): boolean {
  return phase === 'idle-head' || phase === 'reading-head' || phase === 'again-head';
}
