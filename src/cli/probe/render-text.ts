/** The probe report as a terminal table (with colour) or plain text (when piped). */
import { describeTimeline, tally, type CheckResult, type ProbeReport, type Verdict } from './model.js';

const COLOURS: Record<Verdict, string> = { pass: '\x1b[32m', FAIL: '\x1b[31;1m', 'n/a': '\x1b[90m' };
const RESET = '\x1b[0m';
const DIM = '\x1b[2m';

/** Renders `report`; `colour` adds ANSI colours. `verbose` adds the evidence of every FAIL. */
export function renderText(report: ProbeReport, options: { colour: boolean; verbose?: boolean }): string {
  const paint = (text: string, code: string): string => (options.colour ? `${code}${text}${RESET}` : text);
  const lines: string[] = [];
  const s = report.server;
  lines.push(`mcp-continuity probe ${report.url}`);
  lines.push(
    paint(
      `server ${s.name ?? '(unnamed)'}, protocol ${s.protocolVersion ?? '?'}${s.stateless ? ', stateless' : ''}, streaming tool: ${s.tool ?? 'none found'}`,
      DIM,
    ),
  );
  lines.push(paint(`era ${s.era}: ${s.eraEvidence}`, DIM));
  lines.push('');
  const width = Math.max(...report.checks.map((c) => c.id.length));
  for (const c of report.checks) {
    const verdict = paint(c.verdict.padEnd(4), COLOURS[c.verdict]);
    lines.push(`${verdict}  ${c.id.padEnd(width)}  ${c.title}${c.severity ? paint(` [${c.severity}]`, COLOURS.FAIL) : ''}`);
    lines.push(`      ${' '.repeat(width)}  ${paint(`guards: ${c.guards}`, DIM)}`);
    lines.push(`      ${' '.repeat(width)}  ${c.detail}`);
    if (options.verbose && c.verdict === 'FAIL') lines.push(indent(evidenceOf(c), 8 + width));
  }
  const t = tally(report.checks);
  lines.push('');
  lines.push(`${paint(`${t.pass} pass`, COLOURS.pass)}, ${paint(`${t.FAIL} FAIL`, t.FAIL > 0 ? COLOURS.FAIL : '')}, ${t['n/a']} not applicable`);
  const o = report.overall;
  lines.push(paint(`overall: ${o.line}`, o.exitCode === 0 ? COLOURS.pass : COLOURS.FAIL));
  lines.push(`remedy: ${o.remediation}`);
  return lines.join('\n');
}

function evidenceOf(c: CheckResult): string {
  const parts = c.evidence.slice(0, 2).map((e) => e.split('\n').slice(0, 14).join('\n'));
  if (c.timeline) parts.push(`timeline: ${describeTimeline(c.timeline)}`);
  return parts.join('\n~~~\n');
}

function indent(text: string, n: number): string {
  return text
    .split('\n')
    .map((l) => `${' '.repeat(n)}│ ${l}`)
    .join('\n');
}

/** One line for the live display: "[3/14] resume-post …" or its verdict. */
export function progressLine(index: number, total: number, id: string, verdict?: Verdict): string {
  return `[${index + 1}/${total}] ${id}${verdict === undefined ? ' …' : ` ${verdict}`}`;
}
