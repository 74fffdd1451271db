/**
 * What a run prints: a summary table (schedules per topology, the nemesis mix, violations
 * per checker) and, for each failing schedule, its seed, a short history around what went
 * wrong, and the command that replays it.
 */
import { CHECKERS, type Violation } from './checkers.js';
import { formatEvent, type Event } from './history.js';
import type { ScheduleResult } from './run.js';
import { describeOp, topologyName } from './schedule.js';

/** quick: inside the test suite's budget; long: for docs/hardening.md. A seed means a schedule only with its profile. */
export const PROFILES = {
  quick: { runs: 100, budgetMs: 5 * 60_000, maxOps: 2 },
  long: { runs: 2_000, budgetMs: 4 * 3_600_000, maxOps: 3 },
} as const;

export type ProfileName = keyof typeof PROFILES;

export const replayCommand = (seed: number, profile: ProfileName): string => `npm run lifecycle -- --profile ${profile} --seed ${seed} --repeat 5`;

function table(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

const count = <K>(map: Map<K, number>, key: K, by = 1): void => void map.set(key, (map.get(key) ?? 0) + by);

export function summary(results: readonly ScheduleResult[], elapsedMs: number, skipped: number): string {
  const byTopology = new Map<string, ScheduleResult[]>();
  for (const r of results) byTopology.set(topologyName(r.schedule.topology), [...(byTopology.get(topologyName(r.schedule.topology)) ?? []), r]);
  const rows = [...byTopology].map(([name, rs]) => {
    const v = new Map<string, number>();
    for (const r of rs) for (const x of r.violations) count(v, x.checker);
    const ms = rs.map((r) => r.elapsedMs).sort((a, b) => a - b);
    return [
      name,
      String(rs.length),
      String(rs.reduce((n, r) => n + r.calls, 0)),
      ...CHECKERS.map((c) => String(v.get(c) ?? 0)),
      String(rs.filter((r) => r.error !== undefined).length),
      String(rs.filter((r) => r.violations.length > 0 || r.error !== undefined).length),
      `${((ms[Math.floor(ms.length / 2)] ?? 0) / 1000).toFixed(1)} s`,
    ];
  });
  const all = new Map<string, number>();
  for (const r of results) for (const x of r.violations) count(all, x.checker);
  rows.push([
    'TOTAL',
    String(results.length),
    String(results.reduce((n, r) => n + r.calls, 0)),
    ...CHECKERS.map((c) => String(all.get(c) ?? 0)),
    String(results.filter((r) => r.error !== undefined).length),
    String(results.filter((r) => r.violations.length > 0 || r.error !== undefined).length),
    `${(elapsedMs / 1000).toFixed(0)} s total`,
  ]);
  const mix = new Map<string, number>();
  for (const r of results) for (const s of r.schedule.steps) count(mix, s.op.kind);
  const clients = new Map<string, number>();
  for (const r of results) for (const k of r.schedule.clients) count(clients, k);
  return [
    table(['topology', 'schedules', 'calls', ...CHECKERS, 'harness', 'failing', 'median'], rows),
    `nemesis mix: ${[...mix].map(([k, n]) => `${k} ${n}`).join(', ')}`,
    `clients: ${[...clients].map(([k, n]) => `${k} ${n}`).join(', ')}`,
    skipped > 0 ? `(${skipped} schedule(s) not started: time budget)` : '',
  ]
    .filter(Boolean)
    .join('\n');
}

/** The events that explain `violations`: the nemesis, and what the clients and calls involved did. */
export function shortHistory(history: readonly Event[], violations: readonly Violation[], max = 30): string[] {
  const calls = new Set(violations.map((v) => v.call).filter(Boolean));
  const clients = new Set(violations.filter((v) => v.call === undefined).map((v) => v.client));
  const keep = history.filter(
    (e) =>
      e.type === 'nemesis' ||
      e.type === 'gap' ||
      ('call' in e && calls.has(e.call) && e.type !== 'note') ||
      (e.type === 'told' && (clients.has(e.client) || violations.some((v) => v.client === e.client))) ||
      (e.type === 'probe' && clients.has(e.client)),
  );
  const lines = keep.map(formatEvent);
  return lines.length > max ? [...lines.slice(0, max - 1), `… ${lines.length - max + 1} more`] : lines;
}

export function failureReport(r: ScheduleResult, profile: ProfileName): string {
  const s = r.schedule;
  return [
    `FAIL seed ${s.seed}: ${topologyName(s.topology)}, clients ${s.clients.join('+')}, nemesis ${s.steps.map((x) => `+${x.delayMs}ms ${describeOp(x.op)}`).join(', ')}`,
    ...r.violations.slice(0, 8).map((v) => `  [${v.checker}] ${v.client ?? ''} ${v.call ?? ''}: ${v.why}`),
    ...(r.error ? [`  [harness] ${r.error.slice(0, 300)}`] : []),
    '  history:',
    ...shortHistory(r.history, r.violations).map((l) => `    ${l}`),
    `  replay: ${replayCommand(s.seed, profile)}`,
  ].join('\n');
}
