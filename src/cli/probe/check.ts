/** What every check shares: its description, its context, and how it reports. */
import type { CheckResult, Severity, Timeline, Verdict } from './model.js';
import { ProbeLimitExceeded } from './wire.js';
import type { Target, ToolPlan } from './session.js';

/** Everything a check may use. */
export interface CheckContext extends Target {
  /** The tool that makes the server stream, if one was found or named. */
  tool: ToolPlan | undefined;
  /** The server keeps no sessions (2026-07-28 style): session checks are not applicable. */
  stateless: boolean;
  /** Whether the server offers `logging/setLevel` and resource subscriptions (from initialize). */
  offers: { logging: boolean; subscribe: boolean };
  /** Events per streaming call. */
  events: number;
  /** Spacing of those events, ms. */
  intervalMs: number;
  restartCmd: string | undefined;
  replicas: URL[];
}

/** What a check's body returns. */
export interface Outcome {
  verdict: Verdict;
  detail: string;
  evidence: string[];
  timeline?: Timeline | undefined;
  /** Overrides the check's severity for this FAIL. */
  severity?: Severity | undefined;
  /** False: the server showed it cannot resume (no event IDs, resumes refused); true: a resume continued. */
  resumable?: boolean | undefined;
}

/** A check: its description and its body. */
export interface Check {
  id: string;
  title: string;
  /** The failure it guards against, in one line. */
  guards: string;
  /** Needs server sessions (not applicable to a stateless server). */
  session: boolean;
  /** How much its FAIL matters, unless the outcome says otherwise. */
  severity: Severity;
  run(ctx: CheckContext): Promise<Outcome>;
}

export const pass = (detail: string, evidence: string[] = [], timeline?: Timeline): Outcome => ({ verdict: 'pass', detail, evidence, timeline });
export const fail = (detail: string, evidence: string[] = [], timeline?: Timeline): Outcome => ({ verdict: 'FAIL', detail, evidence, timeline });
export const notApplicable = (detail: string, evidence: string[] = []): Outcome => ({ verdict: 'n/a', detail, evidence });

/** Runs one check, timing it; an exception is a FAIL that names it. */
export async function runCheck(check: Check, ctx: CheckContext): Promise<CheckResult> {
  const started = performance.now();
  let outcome: Outcome;
  if (check.session && ctx.stateless) {
    outcome = notApplicable('stateless server (no Mcp-Session-Id, GET answers 405): nothing to resume');
  } else {
    try {
      outcome = await check.run(ctx);
    } catch (error) {
      const message = (error as Error).message;
      const evidence = error instanceof ProbeLimitExceeded ? [message, error.evidence] : [message];
      outcome = { ...fail(`the check could not complete: ${message.split('\n')[0]}`, evidence), severity: 'deviation' };
    }
  }
  const severity = outcome.verdict === 'FAIL' ? (outcome.severity ?? check.severity) : undefined;
  return { id: check.id, title: check.title, guards: check.guards, ...outcome, severity, ms: Math.round(performance.now() - started) };
}

/** An HTTP status that refuses explicitly (4xx), as opposed to a silent 2xx. */
export function refuses(status: number): boolean {
  return status >= 400 && status < 500;
}
