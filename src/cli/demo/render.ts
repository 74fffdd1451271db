/** The demo's terminal output: per scenario, one row and one strip per client. Pure. */
import type { Observation } from './scenario.js';

/** What the strip's characters mean. */
export const LEGEND = '█ delivered in order, R reordered, D duplicated, ░ lost, · never sent (call ended)';

/**
 * A strip of `columns` characters over the call's events (1 … events): each character
 * covers a run of sequence numbers and shows the worst that happened to any of them.
 */
export function strip(o: Pick<Observation, 'events' | 'seqs' | 'outcome'>, columns = 50): string {
  const count = new Map<number, number>();
  const late = new Set<number>();
  let highest = 0;
  for (const s of o.seqs) {
    count.set(s, (count.get(s) ?? 0) + 1);
    if (s < highest) late.add(s);
    highest = Math.max(highest, s);
  }
  // A failed call's unsent tail is not loss: the call ended, and said so.
  const sentUpTo = o.outcome === 'completed' ? o.events : highest;
  const rank = (s: number): number => {
    const n = count.get(s) ?? 0;
    if (n === 0) return s <= sentUpTo ? 4 : 0;
    if (n > 1) return 3;
    return late.has(s) ? 2 : 1;
  };
  const glyph = ['·', '█', 'R', 'D', '░'];
  const width = Math.min(columns, o.events);
  let out = '';
  for (let c = 0; c < width; c++) {
    const from = Math.floor((c * o.events) / width) + 1;
    const to = Math.floor(((c + 1) * o.events) / width);
    let worst = 0;
    for (let s = from; s <= to; s++) worst = Math.max(worst, rank(s));
    out += glyph[worst];
  }
  return out;
}

/** Side-by-side rows of one scenario, each with its strip. */
export function renderScenario(title: string, rows: Observation[], colour: boolean): string {
  const paint = (t: string, code: string): string => (colour ? `\x1b[${code}m${t}\x1b[0m` : t);
  const num = (n: number, width: number): string => (n > 0 ? paint(String(n).padStart(width), '31;1') : String(n).padStart(width));
  const lines = [
    paint(title, '1'),
    `  ${'client'.padEnd(16)}${'events'.padStart(7)}${'lost'.padStart(6)}${'dup'.padStart(5)}${'reord'.padStart(7)}  ${'divergence detected'.padEnd(30)}call`,
  ];
  for (const r of rows) {
    const d = r.divergences[0];
    const detected = d ? `${d.code} in ${d.detectMs} ms` : 'none';
    const outcome = r.outcome === 'completed' ? paint('completed', '32') : paint(`${r.outcome}: ${r.detail}`, '31');
    lines.push(
      `  ${r.client.padEnd(16)}${String(r.received).padStart(7)}${num(r.lost, 6)}${num(r.duplicated, 5)}${num(r.reordered, 7)}  ${detected.padEnd(30)}${outcome}`,
    );
    lines.push(`  ${''.padEnd(16)}${strip(r)}`);
  }
  return lines.join('\n');
}

/**
 * One line on what the rows add up to: per client, how many calls completed although
 * events were lost, duplicated or reordered (calls, not events: one bad call is one).
 */
export function summary(rows: Observation[]): string {
  const silent = (client: Observation['client']): string => {
    const calls = rows.filter((r) => r.client === client);
    const damaged = calls.filter((r) => r.outcome === 'completed' && r.lost + r.duplicated + r.reordered > 0).length;
    return `${client} ${damaged} of ${calls.length}`;
  };
  return `calls that completed with lost, duplicated or reordered events: ${silent('mcp-continuity')}, ${silent('official SDK')}`;
}
