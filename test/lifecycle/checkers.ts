/**
 * The five checkers of the lifecycle harness, pure functions of a recorded history:
 *
 * 1. divergence: every tally log a client delivered is in the log (seq 1…steps, in order,
 *    once; all of them when the call succeeded), or the client was told;
 * 2. at-most-once: no call ran more often than it was sent (once);
 * 3. graceful: before the first ungraceful event (SIGTERM and new replicas only), no call
 *    fails, no session ends, no subscription or log level is lost (an SDK client's call
 *    refused "not accepted" that never ran is its transport's limit: it does not retry);
 * 4. ungraceful: after it, calls end only with `request-abandoned` or a loud refusal, and
 *    the session's state survives or the client is told;
 * 5. liveness: every call ends, and not by timing out.
 */
import type { ClientKind, Event } from './history.js';

export const CHECKERS = ['divergence', 'at-most-once', 'graceful', 'ungraceful', 'liveness'] as const;
export type Checker = (typeof CHECKERS)[number];

export interface Violation {
  checker: Checker;
  t: number;
  client?: string | undefined;
  call?: string | undefined;
  why: string;
}

/** Refusals that tell the client its session ended or diverged (it re-initializes). */
const LOUD = new Set([
  'session-not-found',
  'session-superseded',
  'store-regressed',
  'cursor-ahead',
  'replay-window-exceeded',
  'divergence-limit',
  'http-404',
  'http-409',
  'http-410',
]);

/** Refusals of a call for want of a replica: the front's 5xx, a lone replica's drain (503). */
const AVAILABILITY = new Set(['unavailable', 'server-draining']);

/**
 * The typed refusals that say a call was not accepted (nothing of it ran; retry): the drain
 * contract's answer. Our client sends such a call again, so it never surfaces one; the SDK's
 * transports do not retry a 503, so the call they lose to one is the client's limit, not a
 * broken guarantee, provided the server's tally shows it never ran.
 */
const NOT_ACCEPTED = new Set(['server-draining', 'owner-unavailable']);

/** How long after a call's end a divergence report still counts as telling about it, ms. */
const TOLD_SLACK_MS = 5_000;

interface CallRecord {
  client: string;
  kind: ClientKind;
  steps: number;
  invoke: number;
  end?: Extract<Event, { type: 'ok' | 'fail' }> | undefined;
  notes: Array<Extract<Event, { type: 'note' }>>;
}

interface Index {
  calls: Map<string, CallRecord>;
  told: Map<string, number[]>;
  gaps: Array<[number, number]>;
  /** When the first ungraceful nemesis operation started (Infinity: none did). */
  firstUngraceful: number;
  /** Ungraceful operations' [start, end] intervals. */
  faults: Array<[number, number]>;
  end: number;
}

function index(history: readonly Event[]): Index {
  const calls = new Map<string, CallRecord>();
  const told = new Map<string, number[]>();
  const gaps: Array<[number, number]> = [];
  const faults: Array<[number, number]> = [];
  const open = new Map<string, number>();
  let firstUngraceful = Infinity;
  let gapStart: number | undefined;
  const end = history.at(-1)?.t ?? 0;
  for (const e of history) {
    if (e.type === 'invoke') calls.set(e.call, { client: e.client, kind: e.kind, steps: e.steps, invoke: e.t, notes: [] });
    else if (e.type === 'ok' || e.type === 'fail') {
      const c = calls.get(e.call);
      if (c && !c.end) c.end = e;
    } else if (e.type === 'note') calls.get(e.call)?.notes.push(e);
    else if (e.type === 'told') told.set(e.client, [...(told.get(e.client) ?? []), e.t]);
    else if (e.type === 'gap') {
      if (e.open) gapStart = e.t;
      else if (gapStart !== undefined) {
        gaps.push([gapStart, e.t]);
        gapStart = undefined;
      }
    } else if (e.type === 'nemesis' && !e.graceful) {
      if (e.phase === 'start') {
        firstUngraceful = Math.min(firstUngraceful, e.t);
        open.set(e.detail, e.t);
      } else faults.push([open.get(e.detail) ?? e.t, e.t]);
    }
  }
  if (gapStart !== undefined) gaps.push([gapStart, end]);
  for (const start of open.values()) if (!faults.some(([s]) => s === start)) faults.push([start, end]);
  return { calls, told, gaps, firstUngraceful, faults, end };
}

const runsOf = (history: readonly Event[], call: string): number | undefined =>
  history.find((e): e is Extract<Event, { type: 'runs' }> => e.type === 'runs' && e.call === call)?.count;
const overlaps = (windows: Array<[number, number]>, from: number, to: number): boolean => windows.some(([s, e]) => s <= to && e >= from);
const toldWithin = (ix: Index, client: string, from: number, to: number): boolean => (ix.told.get(client) ?? []).some((t) => t >= from && t <= to);

/** Checker 1: what each client delivered of each call, against what the tool logs. */
export function checkDivergence(history: readonly Event[]): Violation[] {
  const ix = index(history);
  const out: Violation[] = [];
  for (const e of history) {
    if (e.type === 'note' && ix.calls.get(e.call)?.client !== e.client)
      out.push({ checker: 'divergence', t: e.t, client: e.client, call: e.call, why: 'delivered a log of a call this client never sent' });
  }
  for (const [call, c] of ix.calls) {
    const endT = c.end?.t ?? ix.end;
    const excused = toldWithin(ix, c.client, c.invoke, endT + TOLD_SLACK_MS) || (c.end?.type === 'fail' && LOUD.has(c.end.code));
    const problems: string[] = [];
    const seqs = c.notes.filter((n) => !n.filtered && n.client === c.client).map((n) => n.seq);
    seqs.forEach((seq, i) => {
      if (seq !== i + 1)
        problems.push(
          `delivered #${seq} as the ${i + 1}th log (${seq > c.steps ? 'never produced' : seq <= i ? 'duplicate or reordered' : 'a gap before it'})`,
        );
    });
    if (c.end?.type === 'ok' && seqs.length !== c.steps) problems.push(`succeeded with ${seqs.length} of ${c.steps} logs delivered`);
    const late = c.notes.find((n) => c.end !== undefined && n.t > c.end.t);
    if (late) problems.push(`log #${late.seq} delivered after the call ended`);
    const runs = history.find((e): e is Extract<Event, { type: 'runs' }> => e.type === 'runs' && e.call === call);
    if (c.end?.type === 'ok' && runs !== undefined && runs.count === 0) problems.push('succeeded, but the server never ran it');
    if (problems.length > 0 && !excused)
      out.push({ checker: 'divergence', t: endT, client: c.client, call, why: `${problems.slice(0, 2).join('; ')}; the client was not told` });
  }
  return out;
}

/** Checker 2: the server's run count of each call against the one time it was sent. */
export function checkAtMostOnce(history: readonly Event[]): Violation[] {
  const ix = index(history);
  const out: Violation[] = [];
  for (const e of history) {
    if (e.type !== 'runs') continue;
    if (e.count > 1) out.push({ checker: 'at-most-once', t: e.t, call: e.call, client: ix.calls.get(e.call)?.client, why: `sent once, ran ${e.count} times` });
    else if (e.count > 0 && !ix.calls.has(e.call)) out.push({ checker: 'at-most-once', t: e.t, call: e.call, why: `never sent, ran ${e.count} times` });
  }
  return out;
}

/**
 * Checkers 3 and 4: how calls end and whether state survives, before the first ungraceful
 * event (graceful) and after it (ungraceful).
 */
export function checkLifecycle(history: readonly Event[]): Violation[] {
  const ix = index(history);
  const out: Violation[] = [];
  const phase = (t: number): Checker => (t < ix.firstUngraceful ? 'graceful' : 'ungraceful');
  for (const [call, c] of ix.calls) {
    const end = c.end;
    if (end?.type !== 'fail' || end.code === 'timeout') continue;
    const checker = phase(end.t);
    const toldNow = toldWithin(ix, c.client, c.invoke, end.t + TOLD_SLACK_MS) || LOUD.has(end.code);
    // While no replica listens or the only one drains (a single replica restarting), the
    // front or the replica refuses loudly (502, 503): an availability gap, not a lie. The SDK's transports also do not ride through a cut.
    const clientLimit =
      (AVAILABILITY.has(end.code) && overlaps(ix.gaps, c.invoke, end.t)) ||
      (c.kind !== 'ours' && (end.code === 'unavailable' || end.code === 'network') && checker === 'ungraceful' && overlaps(ix.faults, c.invoke, end.t));
    // A front that found no replica (5xx) for a call the server never ran refused it loudly.
    const refusedUnrun = checker === 'ungraceful' && end.code === 'unavailable' && runsOf(history, call) === 0;
    const notAccepted = c.kind !== 'ours' && NOT_ACCEPTED.has(end.code) && runsOf(history, call) === 0;
    if (clientLimit || refusedUnrun || notAccepted) continue;
    if (checker === 'graceful') out.push({ checker, t: end.t, client: c.client, call, why: `a graceful event ended the call: ${end.code}` });
    else if (end.code !== 'request-abandoned' && !toldNow)
      out.push({ checker, t: end.t, client: c.client, call, why: `ended with ${end.code}, neither request-abandoned nor a loud refusal` });
  }
  history.forEach((e, i) => {
    if (e.type === 'told' && phase(e.t) === 'graceful')
      out.push({ checker: 'graceful', t: e.t, client: e.client, why: `a graceful event ended the session: ${e.code}` });
    // A silent probe that a later one of the same session contradicts was a late
    // notification (a replica restarting, a loaded machine), not a lost subscription.
    if (e.type === 'probe' && !e.ok && !heardLater(history, i, e.client)) {
      if (phase(e.t) === 'graceful') out.push({ checker: 'graceful', t: e.t, client: e.client, why: 'a graceful event lost the subscription' });
      else if (!toldWithin(ix, e.client, ix.firstUngraceful, e.t + TOLD_SLACK_MS))
        out.push({ checker: 'ungraceful', t: e.t, client: e.client, why: 'the subscription fell silent and the client was not told' });
    }
    if (e.type === 'note' && e.filtered) {
      const c = ix.calls.get(e.call);
      if (phase(e.t) === 'graceful') out.push({ checker: 'graceful', t: e.t, client: e.client, call: e.call, why: 'a graceful event lost the log level' });
      else if (!toldWithin(ix, e.client, c?.invoke ?? 0, e.t + TOLD_SLACK_MS))
        out.push({ checker: 'ungraceful', t: e.t, client: e.client, call: e.call, why: 'the log level was lost and the client was not told' });
    }
  });
  return dedupe(out);
}

/** Did a probe of `client` after index `i` hear its notification, before the client was told of a new session? */
function heardLater(history: readonly Event[], i: number, client: string): boolean {
  for (const e of history.slice(i + 1)) {
    if (e.type === 'told' && e.client === client) return false;
    if (e.type === 'probe' && e.client === client && e.ok) return true;
  }
  return false;
}

/** Checker 5: every call ends, and not by its timeout. */
export function checkLiveness(history: readonly Event[]): Violation[] {
  const ix = index(history);
  const out: Violation[] = [];
  for (const [call, c] of ix.calls) {
    if (!c.end) out.push({ checker: 'liveness', t: ix.end, client: c.client, call, why: 'never ended' });
    else if (c.end.type === 'fail' && c.end.code === 'timeout')
      out.push({ checker: 'liveness', t: c.end.t, client: c.client, call, why: `hung: ${c.end.message.slice(0, 80)}` });
  }
  return out;
}

/** One violation per checker, client and reason: a lost level shows in every later log. */
function dedupe(list: Violation[]): Violation[] {
  const seen = new Set<string>();
  return list.filter((v) => {
    const key = `${v.checker}|${v.client ?? ''}|${v.why}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Every checker over `history`. */
export function checkAll(history: readonly Event[]): Violation[] {
  return [...checkDivergence(history), ...checkAtMostOnce(history), ...checkLifecycle(history), ...checkLiveness(history)].sort((a, b) => a.t - b.t);
}
