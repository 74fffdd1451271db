/**
 * Mutation checks of the lifecycle checkers: a real recorded history (seed 33036 on two
 * replicas behind nginx: SIGTERM, kill -9, a pub/sub kill; our client and the SDK's) passes
 * every checker; the same history with one guarantee broken fails exactly the checker that
 * guards it, so no checker can pass vacuously. Pure and fast.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { checkAll, type Checker } from './checkers.js';
import type { Event } from './history.js';
import { shortHistory } from './report.js';

type Of<T extends Event['type']> = Extract<Event, { type: T }>;

const REAL: readonly Event[] = JSON.parse(readFileSync(fileURLToPath(new URL('./fixtures/history-33036.json', import.meta.url)), 'utf8')) as Event[];

const firstUngraceful = REAL.find((e): e is Of<'nemesis'> => e.type === 'nemesis' && !e.graceful)?.t ?? Infinity;
const clone = (): Event[] => REAL.map((e) => ({ ...e }));
const endOf = (h: Event[], call: string): number => h.findIndex((e) => (e.type === 'ok' || e.type === 'fail') && e.call === call);

/** A call of `kind` that succeeded with at least `steps` logs, before or after the first ungraceful event. */
function okCall(h: Event[], when: 'before' | 'after', steps = 1, kind?: string): Of<'invoke'> {
  const found = h.find((e): e is Of<'invoke'> => {
    if (e.type !== 'invoke' || e.steps < steps || (kind !== undefined && e.kind !== kind)) return false;
    const end = h[endOf(h, e.call)];
    return end?.type === 'ok' && (when === 'before' ? end.t < firstUngraceful : e.t > firstUngraceful);
  });
  assert.ok(found, `the fixture has a successful call ${when} the first ungraceful event`);
  return found;
}

/** Every probe of `client` from `from` on stays silent: its subscription is gone. */
function silence(h: Event[], client: string, from: number): void {
  for (const e of h) if (e.type === 'probe' && e.client === client && e.t >= from) e.ok = false;
}

function checkersOf(h: readonly Event[]): Set<Checker> {
  return new Set(checkAll(h).map((v) => v.checker));
}

function assertOnly(h: readonly Event[], checker: Checker): void {
  const found = checkAll(h);
  assert.ok(
    found.some((v) => v.checker === checker),
    `the ${checker} checker flags the mutation`,
  );
  assert.deepEqual([...checkersOf(h)], [checker], `only the ${checker} checker: ${JSON.stringify(found)}`);
  assert.ok(shortHistory(h, found).length > 0, 'a failure prints a short history');
}

test('the real history passes every checker', () => {
  assert.ok(firstUngraceful < Infinity && REAL.some((e) => e.type === 'nemesis' && e.graceful), 'the fixture has graceful and ungraceful events');
  assert.deepEqual(checkAll(REAL), []);
});

test('divergence: a log missing from the middle of a successful call', () => {
  const h = clone();
  const call = okCall(h, 'after', 3);
  const second = h.findIndex((e) => e.type === 'note' && e.call === call.call && e.seq === 2 && !e.filtered);
  h.splice(second, 1);
  assertOnly(h, 'divergence');
});

test('divergence: a log delivered twice, and one never produced', () => {
  for (const mutate of [(n: Of<'note'>) => ({ ...n }), (n: Of<'note'>) => ({ ...n, seq: 99 })]) {
    const h = clone();
    const call = okCall(h, 'after', 2);
    const at = h.findIndex((e) => e.type === 'note' && e.call === call.call && e.seq === 1);
    h.splice(at + 1, 0, mutate(h[at] as Of<'note'>));
    assertOnly(h, 'divergence');
  }
});

test('divergence: the same hole is no violation when the client was told', () => {
  const h = clone();
  const call = okCall(h, 'after', 3);
  h.splice(
    h.findIndex((e) => e.type === 'note' && e.call === call.call && e.seq === 2),
    1,
  );
  const end = h[endOf(h, call.call)] as Of<'ok'>;
  h.splice(endOf(h, call.call) + 1, 0, { t: end.t, type: 'told', client: call.client, code: 'events-lost' });
  assert.ok(!checkersOf(h).has('divergence'));
});

test('at-most-once: a call the server ran twice', () => {
  const h = clone();
  const runs = h.find((e): e is Of<'runs'> => e.type === 'runs' && e.count === 1);
  assert.ok(runs);
  runs.count = 2;
  assertOnly(h, 'at-most-once');
});

test('graceful: a call ended by a graceful event, a lost log level, an ended session', () => {
  const call = okCall(REAL as Event[], 'before', 1);
  const mutations: Array<(h: Event[]) => void> = [
    (h) => {
      const i = endOf(h, call.call);
      const end = h[i] as Of<'ok'>;
      h[i] = { t: end.t, type: 'fail', client: end.client, call: end.call, code: 'request-abandoned', message: 'mutated' };
    },
    (h) => {
      // The info-level twin of a log the client delivered: its level should have filtered it.
      const at = h.findIndex((e) => e.type === 'note' && e.call === call.call);
      h.splice(at + 1, 0, { ...(h[at] as Of<'note'>), filtered: true });
    },
    (h) => h.splice(endOf(h, call.call) + 1, 0, { t: (h[endOf(h, call.call)] as Event).t, type: 'told', client: call.client, code: 'session-not-found' }),
  ];
  for (const mutate of mutations) {
    const h = clone();
    mutate(h);
    assertOnly(h, 'graceful');
  }
});

test('ungraceful: a call ended otherwise than request-abandoned, a subscription lost without telling', () => {
  const call = okCall(REAL as Event[], 'after', 1, 'ours');
  const mutations: Array<(h: Event[]) => void> = [
    (h) => {
      const i = endOf(h, call.call);
      const end = h[i] as Of<'ok'>;
      h[i] = { t: end.t, type: 'fail', client: end.client, call: end.call, code: 'stream-lost', message: 'mutated' };
    },
    (h) => silence(h, call.client, firstUngraceful),
  ];
  for (const mutate of mutations) {
    const h = clone();
    mutate(h);
    assertOnly(h, 'ungraceful');
  }
  // The same abandonment told as request-abandoned is what an ungraceful event may do.
  const h = clone();
  const i = endOf(h, call.call);
  const end = h[i] as Of<'ok'>;
  h[i] = { t: end.t, type: 'fail', client: end.client, call: end.call, code: 'request-abandoned', message: 'may have run' };
  assert.deepEqual(
    checkAll(h).filter((v) => v.checker !== 'divergence'),
    [],
  );
});

test('a subscription lost for good is flagged in the phase it was lost in; a late notification is not', () => {
  const client = okCall(REAL as Event[], 'before', 1).client;
  const h = clone();
  silence(h, client, 0);
  assert.ok(checkersOf(h).has('graceful'), JSON.stringify(checkAll(h)));
  // One silent probe that a later one contradicts: the notification came late.
  const late = clone();
  const probe = late.find((e): e is Of<'probe'> => e.type === 'probe' && e.client === client);
  assert.ok(probe);
  probe.ok = false;
  assert.deepEqual(checkAll(late), []);
});

test('liveness: a call that never ended, and one that timed out', () => {
  const call = okCall(REAL as Event[], 'after', 1);
  for (const mutate of [
    (h: Event[]) => void h.splice(endOf(h, call.call), 1),
    (h: Event[]) => {
      const i = endOf(h, call.call);
      const end = h[i] as Of<'ok'>;
      h[i] = { t: end.t, type: 'fail', client: end.client, call: end.call, code: 'timeout', message: 'Request timed out' };
    },
  ]) {
    const h = clone();
    mutate(h);
    // An unended call that delivered its logs is no divergence: only liveness speaks.
    assert.ok(checkersOf(h).has('liveness'), JSON.stringify(checkAll(h)));
    assert.ok(!checkersOf(h).has('graceful') && !checkersOf(h).has('at-most-once'));
  }
});

test('excused: a refusal while no replica listens, and a front 5xx for a call that never ran; not when it ran', () => {
  const call = okCall(REAL as Event[], 'after', 1, 'ours');
  const refuse = (h: Event[], code: string): void => {
    const i = endOf(h, call.call);
    const end = h[i] as Of<'ok'>;
    h[i] = { t: end.t, type: 'fail', client: end.client, call: end.call, code, message: 'HTTP 502' };
    h.splice(0, h.length, ...h.filter((e) => !(e.type === 'note' && e.call === call.call)));
  };
  const inGap = clone();
  refuse(inGap, 'server-draining');
  inGap.splice(
    inGap.findIndex((e) => e.type === 'invoke' && e.call === call.call),
    0,
    { t: call.t, type: 'gap', open: true },
  );
  inGap.splice(endOf(inGap, call.call) + 1, 0, { t: (inGap[endOf(inGap, call.call)] as Event).t, type: 'gap', open: false });
  assert.deepEqual(checkAll(inGap), []);
  const unrun = clone();
  refuse(unrun, 'unavailable');
  const runs = unrun.find((e): e is Of<'runs'> => e.type === 'runs' && e.call === call.call);
  assert.ok(runs);
  runs.count = 0;
  assert.deepEqual(checkAll(unrun), []);
  runs.count = 1;
  assert.deepEqual([...checkersOf(unrun)], ['ungraceful']);
});

test("excused: an SDK client's call refused not accepted that never ran; not ours, and not when it ran", () => {
  const refuse = (kind: 'ours' | 'sdk1', code: string, count: number): Event[] => {
    const h = clone();
    const call = okCall(h, 'before', 1, kind);
    const i = endOf(h, call.call);
    const end = h[i] as Of<'ok'>;
    h[i] = { t: end.t, type: 'fail', client: end.client, call: end.call, code, message: 'HTTP 503' };
    h.splice(0, h.length, ...h.filter((e) => !(e.type === 'note' && e.call === call.call)));
    const runs = h.find((e): e is Of<'runs'> => e.type === 'runs' && e.call === call.call);
    assert.ok(runs, "the fixture has the call's run count");
    runs.count = count;
    return h;
  };
  for (const code of ['server-draining', 'owner-unavailable']) {
    assert.deepEqual(checkAll(refuse('sdk1', code, 0)), [], `sdk1, ${code}, never ran`);
    assertOnly(refuse('sdk1', code, 1), 'graceful');
    // Our client retries a not-accepted refusal: surfacing one is a violation.
    assertOnly(refuse('ours', code, 0), 'graceful');
  }
  // Not a typed not-accepted answer: still a violation.
  assertOnly(refuse('sdk1', 'endpoint-closed', 0), 'graceful');
});
