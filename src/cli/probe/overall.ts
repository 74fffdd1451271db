/**
 * The overall verdict: one line a reader can act on, from the era and the check results.
 * A server that cannot resume never reads better than one that resumes and loses events.
 * Pure.
 */
import type { CheckResult, Era, Overall, Severity } from './model.js';

/** Exit codes of the probe, one per overall verdict (1 and 2 are errors and bad arguments). */
export const EXIT_CODES: Record<Overall['verdict'], number> = {
  'resumes-safely': 0,
  'not-applicable': 0,
  'resumes-with-deviations': 3,
  'loses-events': 4,
  'not-resumable': 5,
};

const count = (checks: readonly CheckResult[], severity: Severity): CheckResult[] => checks.filter((c) => c.verdict === 'FAIL' && c.severity === severity);

const names = (checks: readonly CheckResult[]): string => checks.map((c) => c.id).join(', ');

/** Also-found note for findings below the verdict's own level. */
function alsoFound(checks: readonly CheckResult[], levels: readonly Severity[]): string {
  const parts = levels
    .map((s) => [s, count(checks, s)] as const)
    .filter(([, found]) => found.length > 0)
    .map(([s, found]) => `${found.length} ${s} (${names(found)})`);
  return parts.length === 0 ? '' : `; also: ${parts.join(', ')}`;
}

/** The overall verdict for a server of `era` (`stateless`: no sessions) with these results. */
export function overallVerdict(era: Era, stateless: boolean, checks: readonly CheckResult[]): Overall {
  const make = (verdict: Overall['verdict'], line: string, remediation: string): Overall => ({ verdict, line, remediation, exitCode: EXIT_CODES[verdict] });
  if (era === 'modern') {
    return make(
      'not-applicable',
      `modern era: resumption not applicable${alsoFound(checks, ['loss', 'deviation', 'hygiene'])}`,
      'The server speaks 2026-07-28 only: no sessions, no Last-Event-ID, GET answers 405. A cut request is simply retried by the client; nothing here can be resumed or lost across a resume.',
    );
  }
  if (stateless) {
    return make(
      'not-applicable',
      `stateless: resumption not applicable${alsoFound(checks, ['loss', 'deviation', 'hygiene'])}`,
      'The server keeps no sessions, so nothing can be resumed: a cut call is lost and clients must retry it. Serve sessions with an event store that proves continuity if calls are long.',
    );
  }
  const loss = count(checks, 'loss');
  const notResumable = checks.some((c) => c.resumable === false) && !checks.some((c) => c.resumable === true);
  if (notResumable) {
    return make(
      'not-resumable',
      `not resumable: clients lose in-flight work on any cut${alsoFound(checks, ['loss', 'deviation'])}`,
      'Give the server an event store (event IDs on every SSE event, replay after Last-Event-ID on GET), or refuse resumption explicitly and document it. Until then every dropped connection fails the call in flight.',
    );
  }
  if (loss.length > 0) {
    return make(
      'loses-events',
      `resumes but loses events: ${loss.length} silent loss, duplication or leak (${names(loss)})${alsoFound(checks, ['deviation'])}`,
      'Clients that trust a 200 resume get wrong results without an error. Replay exactly the events after the cursor, per session, in order; refuse (4xx) any cursor that cannot be honoured; persist the log across restarts and share it across replicas, or refuse there.',
    );
  }
  const deviation = count(checks, 'deviation');
  if (deviation.length > 0) {
    return make(
      'resumes-with-deviations',
      `resumes without silent loss, but deviates from the spec (${names(deviation)})${alsoFound(checks, ['hygiene'])}`,
      'Nothing was lost silently, but clients meet wrong status codes or unchecked inputs: fix each deviation listed.',
    );
  }
  return make(
    'resumes-safely',
    `resumes safely${alsoFound(checks, ['hygiene'])}`,
    'Nothing to fix for continuity; hygiene findings, if any, make failures harder to see or pace.',
  );
}
