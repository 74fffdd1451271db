/**
 * The verdict rules of the resume checks, as pure functions of what was observed, so the
 * rules can be read (and tested) apart from the HTTP that gathers the observations.
 */
import { describeTimeline, intact, type Severity, type Timeline, type Verdict } from './model.js';

/** A verdict and its one-line reason. */
export interface Judgement {
  verdict: Verdict;
  detail: string;
}

/** What a resume returned. */
export interface ResumeObservation {
  status: number;
  /** `error.data.reason` (or message) of a refusal. */
  reason: string;
  timeline: Timeline;
  /** A terminal JSON-RPC error on the resumed stream, e.g. `request-abandoned`. */
  terminal?: string | undefined;
}

/** A verdict with the severity of its FAIL and what it says about resumability. */
export interface ResumeJudgement extends Judgement {
  severity?: Severity | undefined;
  resumable?: boolean | undefined;
}

/** A plain resume (nothing happened to the server): it must continue exactly. */
export function judgeResume(o: ResumeObservation): ResumeJudgement {
  if (o.status !== 200)
    return {
      verdict: 'FAIL',
      severity: 'deviation',
      resumable: false,
      detail: `the resume was refused with HTTP ${o.status} (${o.reason}) although nothing was lost`,
    };
  if (!intact(o.timeline)) return { verdict: 'FAIL', severity: 'loss', resumable: true, detail: `resumed with 200 but ${describeTimeline(o.timeline)}` };
  return { verdict: 'pass', resumable: true, detail: `resumed exactly: ${describeTimeline(o.timeline)}` };
}

/**
 * A resume across a restart or onto another replica, of a call whose result the probe had
 * already read (so every event exists): continuing exactly passes, and so does an explicit
 * refusal (4xx). A hole is never excused: a 200 that loses events fails even when it ends
 * with an error response, as do duplicates and reordering.
 */
export function judgeAcrossBoundary(what: string, o: ResumeObservation): ResumeJudgement {
  if (o.status >= 400 && o.status < 500) return { verdict: 'pass', detail: `${what}: refused explicitly with HTTP ${o.status} (${o.reason})` };
  if (o.status !== 200) return { verdict: 'FAIL', severity: 'deviation', detail: `${what}: HTTP ${o.status}, neither a resume nor an explicit refusal` };
  if (!intact(o.timeline)) {
    const ending = o.terminal === undefined ? '' : `, then an error response (${o.terminal}) that does not excuse the hole`;
    return { verdict: 'FAIL', severity: 'loss', detail: `${what}: resumed with 200 but ${describeTimeline(o.timeline)}${ending}` };
  }
  if (o.terminal !== undefined) return { verdict: 'pass', detail: `${what}: every event replayed, then the call failed explicitly (${o.terminal})` };
  return { verdict: 'pass', detail: `${what}: resumed exactly, ${describeTimeline(o.timeline)}` };
}

/** A cursor the server never issued: only an explicit 4xx passes; a 200 is the silent failure. */
export function judgeForgedCursor(cursor: string, status: number, events: number): ResumeJudgement {
  if (status >= 400 && status < 500) return { verdict: 'pass', detail: `Last-Event-ID ${JSON.stringify(cursor)} got HTTP ${status}` };
  const what = status === 200 ? `a silent 200 with ${events} events` : `HTTP ${status}`;
  return {
    verdict: 'FAIL',
    severity: status === 200 ? 'loss' : 'deviation',
    detail: `Last-Event-ID ${JSON.stringify(cursor)} got ${what}, not an explicit refusal`,
  };
}
