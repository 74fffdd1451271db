/**
 * Runs a profile: each family is set up once, its scenarios run for their seeds (bounded
 * in count and in time), and one row per scenario goes into the summary table, with the
 * seeds of failing runs so that any of them can be replayed alone.
 */
import { addCounts, isZero, ZERO, type Counts } from './check.js';
import type { Family, RunResult } from './types.js';

export interface Row {
  scenario: string;
  runs: number;
  landed: number;
  counts: Counts;
  outcomes: Map<string, number>;
  failures: Array<{ seed: number; why: string }>;
}

export interface ProfileOptions {
  /** Runs per scenario, by family name prefix (first match wins); `default` otherwise. */
  runs: (family: string, scenario: string) => number;
  /** Base seed; a run's seed is derived from it, the scenario name and the run's index. */
  seed: number;
  /** Only scenarios whose name includes this. */
  only?: string | undefined;
  /** Replay exactly this seed (with `only`). */
  exactSeed?: number | undefined;
  /** Stop starting new runs after this, ms. */
  budgetMs: number;
  /** One run may take this long before it counts as hung, ms. */
  runTimeoutMs: number;
  log?: ((line: string) => void) | undefined;
}

/** FNV-1a of a name, so each scenario has its own seed stream. */
function hash(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

export function seedOf(base: number, scenario: string, index: number): number {
  return (base ^ hash(scenario)) + index * 7919;
}

async function bounded(run: Promise<RunResult>, ms: number): Promise<RunResult> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hung = new Promise<RunResult>((resolve) => {
    timer = setTimeout(() => resolve({ counts: ZERO, outcome: 'hung', landed: false, failure: `no outcome within ${ms} ms` }), ms);
  });
  try {
    return await Promise.race([run, hung]);
  } finally {
    clearTimeout(timer);
  }
}

function familyMayMatch(family: string, only: string): boolean {
  const kind = only.split('/')[0] ?? '';
  return family.split('/')[0] === kind || family === 'adversarial' || family.includes(kind);
}

export async function runProfile(families: Family[], options: ProfileOptions): Promise<{ rows: Row[]; elapsedMs: number; truncated: boolean }> {
  const started = Date.now();
  const rows: Row[] = [];
  let truncated = false;
  for (const family of families) {
    // A family's scenarios need not share its name (adversarial: cursor/…, host-origin/…): skip
    // a family only when `only` names another family's kind outright.
    if (options.only !== undefined && !familyMayMatch(family.name, options.only)) continue;
    const scenarios = await family.setup();
    try {
      for (const scenario of scenarios) {
        if (options.only !== undefined && !scenario.name.includes(options.only)) continue;
        const row: Row = { scenario: scenario.name, runs: 0, landed: 0, counts: ZERO, outcomes: new Map(), failures: [] };
        rows.push(row);
        const n = options.exactSeed === undefined ? options.runs(family.name, scenario.name) : 1;
        for (let i = 0; i < n; i++) {
          if (Date.now() - started > options.budgetMs) {
            truncated = true;
            break;
          }
          const seed = options.exactSeed ?? seedOf(options.seed, scenario.name, i);
          const result = await bounded(
            scenario
              .run(seed)
              .catch((error: unknown) => ({ counts: ZERO, outcome: 'threw', landed: false, failure: String((error as Error)?.stack ?? error) })),
            options.runTimeoutMs,
          );
          row.runs++;
          if (result.landed) row.landed++;
          row.counts = addCounts(row.counts, result.counts);
          row.outcomes.set(result.outcome, (row.outcomes.get(result.outcome) ?? 0) + 1);
          if (result.failure !== undefined || !isZero(result.counts)) {
            row.failures.push({ seed, why: result.failure ?? JSON.stringify(result.counts) });
            options.log?.(`FAIL ${scenario.name} seed ${seed}: ${result.failure ?? JSON.stringify(result.counts)}`);
          }
        }
      }
    } finally {
      await family.teardown();
    }
  }
  return { rows, elapsedMs: Date.now() - started, truncated };
}

/** The summary table, one row per scenario, then the totals and the failing seeds. */
export function formatTable(rows: Row[], elapsedMs: number): string {
  const head = ['scenario', 'runs', 'landed', 'lost', 'dup', 'reord', 'unexp', 'fail', 'outcomes'];
  const body = rows.map((r) => [
    r.scenario,
    String(r.runs),
    String(r.landed),
    String(r.counts.lost),
    String(r.counts.duplicated),
    String(r.counts.reordered),
    String(r.counts.unexpected),
    String(r.failures.length),
    [...r.outcomes].map(([k, v]) => `${k}:${v}`).join(' '),
  ]);
  const total = rows.reduce((t, r) => addCounts(t, r.counts), ZERO);
  const runs = rows.reduce((n, r) => n + r.runs, 0);
  const failures = rows.reduce((n, r) => n + r.failures.length, 0);
  body.push([
    'TOTAL',
    String(runs),
    String(rows.reduce((n, r) => n + r.landed, 0)),
    String(total.lost),
    String(total.duplicated),
    String(total.reordered),
    String(total.unexpected),
    String(failures),
    `${(elapsedMs / 1000).toFixed(1)} s`,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] ?? '').length)));
  const line = (cells: string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  const out = [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...body.map(line)];
  for (const r of rows) for (const f of r.failures.slice(0, 5)) out.push(`failing: ${r.scenario} --seed ${f.seed}: ${f.why.slice(0, 200)}`);
  return out.join('\n');
}
