/**
 * The probe's pure core: check results, and the timeline of a streaming check (what was
 * sent, where the stream was cut, what the resume replayed, lost, duplicated or reordered).
 * No I/O here; renderers and the runner build on it.
 */

/** A check's outcome. `n/a` when the server does not offer what the check tests. */
export type Verdict = 'pass' | 'FAIL' | 'n/a';

/**
 * How much a FAIL matters: `loss` (events or state silently lost, duplicated, or leaked to
 * another session), `deviation` (the spec or an explicit-refusal rule broken, visibly),
 * `hygiene` (what makes failures hard to detect or pace, but loses nothing by itself).
 */
export type Severity = 'loss' | 'deviation' | 'hygiene';

/** Severities, worst first. */
export const SEVERITIES: readonly Severity[] = ['loss', 'deviation', 'hygiene'];

/**
 * The protocol era(s) a server speaks: `legacy` (2025-era, initialize and sessions),
 * `modern` (2026-07-28 only: no sessions, no resumption), `dual` (both at one URL; the
 * legacy leg is audited).
 */
export type Era = 'legacy' | 'dual' | 'modern';

/** The one-line answer a reader acts on, with its remediation and the exit code it maps to. */
export interface Overall {
  verdict: 'resumes-safely' | 'resumes-with-deviations' | 'loses-events' | 'not-resumable' | 'not-applicable';
  /** For example "resumes but loses events". */
  line: string;
  /** What to do about it. */
  remediation: string;
  exitCode: number;
}

/** One mark on a timeline, in the order the client saw things. */
export interface TimelineMark {
  /** The event's key (e.g. `progress 3`), or a label for cuts and resumes. */
  key: string;
  kind: 'sent' | 'cut' | 'resume' | 'replayed' | 'lost' | 'duplicated' | 'reordered';
}

/** What happened to one stream across a cut and a resume. */
export interface Timeline {
  /** What the server should have delivered, in order. */
  expected: string[];
  marks: TimelineMark[];
  lost: number;
  duplicated: number;
  /** Out-of-order steps: later events that arrived before an earlier one. */
  reordered: number;
}

/** The result of one check. */
export interface CheckResult {
  id: string;
  title: string;
  /** The failure this check guards against, in one line. */
  guards: string;
  verdict: Verdict;
  /** How much a FAIL matters (set on FAIL only). */
  severity?: Severity | undefined;
  /** False when the check found that the server cannot resume at all (no event IDs, or resumes refused). */
  resumable?: boolean | undefined;
  /** Why this verdict, in one line. */
  detail: string;
  /** Trimmed requests and responses. */
  evidence: string[];
  timeline?: Timeline | undefined;
  ms: number;
}

/** A whole probe run. */
export interface ProbeReport {
  url: string;
  startedAt: string;
  /** What the probe learned about the server before checking it. */
  server: { name?: string | undefined; protocolVersion?: string | undefined; stateless: boolean; tool?: string | undefined; era: Era; eraEvidence: string };
  checks: CheckResult[];
  overall: Overall;
}

/** `expected` against what arrived `before` a cut and `after` the resume (keys, in arrival order). */
export function analyzeTimeline(expected: readonly string[], before: readonly string[], after: readonly string[], cut = true): Timeline {
  const position = new Map<string, number>();
  expected.forEach((k, i) => position.set(k, i));
  const seen = new Map<string, number>();
  const marks: TimelineMark[] = [];
  let duplicated = 0;
  let reordered = 0;
  let highest = -1;
  const take = (key: string, kind: 'sent' | 'replayed'): void => {
    const count = (seen.get(key) ?? 0) + 1;
    seen.set(key, count);
    const at = position.get(key);
    if (count > 1 || at === undefined) {
      // An event twice, or one the server should never have sent on this stream.
      duplicated++;
      marks.push({ key, kind: 'duplicated' });
      return;
    }
    if (at < highest) {
      reordered++;
      marks.push({ key, kind: 'reordered' });
      return;
    }
    highest = at;
    marks.push({ key, kind });
  };
  for (const key of before) take(key, 'sent');
  if (cut) marks.push({ key: `cut after ${before.length}`, kind: 'cut' });
  if (cut) marks.push({ key: 'resume', kind: 'resume' });
  for (const key of after) take(key, cut ? 'replayed' : 'sent');
  let lost = 0;
  for (const key of expected) {
    if (!seen.has(key)) {
      lost++;
      marks.push({ key, kind: 'lost' });
    }
  }
  return { expected: [...expected], marks, lost, duplicated, reordered };
}

/** A timeline's counts as one line: "12 events: 0 lost, 0 duplicated, 0 reordered". */
export function describeTimeline(t: Timeline): string {
  return `${t.expected.length} events: ${t.lost} lost, ${t.duplicated} duplicated, ${t.reordered} reordered`;
}

/** Is the timeline intact? */
export function intact(t: Timeline): boolean {
  return t.lost === 0 && t.duplicated === 0 && t.reordered === 0;
}

/**
 * A stable key for a JSON-RPC message on a stream, so one run can be compared with
 * another: progress by its value, log messages by their sequence number (`data.seq`,
 * or `#N` in a text), results by request id; anything else by its method.
 */
export function eventKey(message: Record<string, unknown>): string {
  const method = message['method'];
  const params = (message['params'] ?? {}) as Record<string, unknown>;
  if (method === 'notifications/progress') return `progress ${String(params['progress'])}`;
  if (method === 'notifications/message') {
    const data = params['data'];
    if (typeof data === 'object' && data !== null && typeof (data as Record<string, unknown>)['seq'] === 'number')
      return `log ${String((data as Record<string, unknown>)['seq'])}`;
    const text = typeof data === 'string' ? data : JSON.stringify(data);
    const n = /#(\d+)/.exec(text ?? '');
    return n ? `log ${n[1]}` : `log ${(text ?? '').slice(0, 40)}`;
  }
  if ('result' in message || 'error' in message) return `response ${JSON.stringify(message['id'])}`;
  return typeof method === 'string' ? method : 'message';
}

/** Counts of each verdict. */
export function tally(checks: readonly CheckResult[]): Record<Verdict, number> {
  const out: Record<Verdict, number> = { pass: 0, FAIL: 0, 'n/a': 0 };
  for (const c of checks) out[c.verdict]++;
  return out;
}
