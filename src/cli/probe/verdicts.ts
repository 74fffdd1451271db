/**
 * The verdict rules of the resume checks, as pure functions of what was observed, so the
 * rules can be read (and tested) apart from the HTTP that gathers the observations.
 */
import { describeTimeline, intact, type Timeline, type Verdict } from './model.js';

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

/** A plain resume (nothing happened to the server): it must continue exactly. */
export function judgeResume(o: ResumeObservation): Judgement {
  if (o.status !== 200) return { verdict: 'FAIL', detail: `the resume was refused with HTTP ${o.status} (${o.reason}) although nothing was lost` };
  if (!intact(o.timeline)) return { verdict: 'FAIL', detail: `resumed with 200 but ${describeTimeline(o.timeline)}` };
  return { verdict: 'pass', detail: `resumed exactly: ${describeTimeline(o.timeline)}` };
}

/**
 * A resume across a restart or onto another replica: continuing exactly passes, and so does
 * an explicit refusal (4xx, or a terminal error that ends the call); a 2xx that loses,
 * repeats or reorders events is the failure.
 */
export function judgeAcrossBoundary(what: string, o: ResumeObservation): Judgement {
  if (o.status >= 400 && o.status < 500) return { verdict: 'pass', detail: `${what}: refused explicitly with HTTP ${o.status} (${o.reason})` };
  if (o.status !== 200) return { verdict: 'FAIL', detail: `${what}: HTTP ${o.status}, neither a resume nor an explicit refusal` };
  if (o.terminal !== undefined && o.timeline.duplicated === 0 && o.timeline.reordered === 0) return { verdict: 'pass', detail: `${what}: the call failed explicitly (${o.terminal})` };
  if (!intact(o.timeline)) return { verdict: 'FAIL', detail: `${what}: resumed with 200 but ${describeTimeline(o.timeline)}` };
  return { verdict: 'pass', detail: `${what}: resumed exactly, ${describeTimeline(o.timeline)}` };
}

/** A cursor the server never issued: only an explicit 4xx passes; a 200 is the silent failure. */
export function judgeForgedCursor(cursor: string, status: number, events: number): Judgement {
  if (status >= 400 && status < 500) return { verdict: 'pass', detail: `Last-Event-ID ${JSON.stringify(cursor)} got HTTP ${status}` };
  const what = status === 200 ? `a silent 200 with ${events} events` : `HTTP ${status}`;
  return { verdict: 'FAIL', detail: `Last-Event-ID ${JSON.stringify(cursor)} got ${what}, not an explicit refusal` };
}
