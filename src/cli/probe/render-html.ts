/**
 * The probe report as one self-contained HTML page: inline CSS, inline SVG timelines, no
 * scripts, no network references, so it can be attached to a CI run or mailed as is.
 */
import { describeTimeline, tally, type CheckResult, type ProbeReport, type Timeline, type TimelineMark } from './model.js';

const escape = (s: string): string => s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);

const KIND_COLOUR: Record<TimelineMark['kind'], string> = {
  sent: '#4a90d9',
  replayed: '#2e9e5b',
  cut: '#222',
  resume: '#888',
  lost: '#d93025',
  duplicated: '#f29900',
  reordered: '#a142f4',
};

const CSS = `
body{font:14px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:72rem;color:#222;padding:0 1rem}
h1{font-size:1.4rem;margin-bottom:.2rem}.meta{color:#666;margin-top:0}
table{border-collapse:collapse;width:100%;margin:1rem 0}
th,td{text-align:left;padding:.35rem .6rem;border-bottom:1px solid #e3e3e3;vertical-align:top}
th{background:#f6f6f6}.v{font-weight:700;white-space:nowrap}
.pass{color:#188038}.FAIL{color:#d93025}.na{color:#888}
.guards{color:#666;font-size:.9em}
section.check{border:1px solid #e3e3e3;border-radius:6px;margin:1rem 0;padding:.6rem 1rem}
section.check h2{font-size:1.05rem;margin:.2rem 0}
pre{background:#f8f8f8;padding:.5rem;overflow:auto;font-size:12px;max-height:18rem;white-space:pre-wrap;word-break:break-all}
.legend span{display:inline-block;margin-right:1rem;font-size:.85em}
.legend i{display:inline-block;width:.8em;height:.8em;margin-right:.3em;vertical-align:middle}
`;

/** An inline SVG of one timeline: one mark per event, in arrival order, coloured by fate. */
export function timelineSvg(t: Timeline, id: string): string {
  const cell = 9;
  const perRow = 80;
  const rows = Math.max(1, Math.ceil(t.marks.length / perRow));
  const width = perRow * cell + 10;
  const height = rows * (cell + 6) + 10;
  const shapes = t.marks.map((m, i) => {
    const x = 5 + (i % perRow) * cell;
    const y = 5 + Math.floor(i / perRow) * (cell + 6);
    const title = `<title>${escape(`${m.kind}: ${m.key}`)}</title>`;
    if (m.kind === 'cut' || m.kind === 'resume') {
      return `<rect class="mark ${m.kind}" x="${x + 3}" y="${y - 3}" width="2" height="${cell + 6}" fill="${KIND_COLOUR[m.kind]}">${title}</rect>`;
    }
    return `<rect class="mark ${m.kind}" x="${x}" y="${y}" width="${cell - 2}" height="${cell}" rx="1" fill="${KIND_COLOUR[m.kind]}">${title}</rect>`;
  });
  return `<svg class="timeline" id="timeline-${escape(id)}" role="img" aria-label="${escape(describeTimeline(t))}" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">${shapes.join('')}</svg>`;
}

function legend(): string {
  const kinds = Object.keys(KIND_COLOUR) as TimelineMark['kind'][];
  return `<p class="legend">${kinds.map((k) => `<span><i style="background:${KIND_COLOUR[k]}"></i>${k}</span>`).join('')}</p>`;
}

function verdictClass(c: CheckResult): string {
  return c.verdict === 'n/a' ? 'na' : c.verdict;
}

function section(c: CheckResult): string {
  const timeline = c.timeline ? `<p>${escape(describeTimeline(c.timeline))}</p>${timelineSvg(c.timeline, c.id)}${legend()}` : '';
  const evidence = c.evidence.map((e) => `<pre>${escape(e)}</pre>`).join('');
  return `<section class="check" id="check-${escape(c.id)}">
<h2><span class="v ${verdictClass(c)}">${escape(c.verdict)}</span>${c.severity ? ` <span class="FAIL">[${escape(c.severity)}]</span>` : ''} ${escape(c.id)}: ${escape(c.title)}</h2>
<p class="guards">Guards against: ${escape(c.guards)}</p>
<p>${escape(c.detail)}</p>
${timeline}
${evidence ? `<details${c.verdict === 'FAIL' ? ' open' : ''}><summary>evidence (requests and responses, trimmed)</summary>${evidence}</details>` : ''}
</section>`;
}

/** Renders `report` as a complete HTML document. */
export function renderHtml(report: ProbeReport): string {
  const t = tally(report.checks);
  const s = report.server;
  const rows = report.checks
    .map(
      (c) =>
        `<tr><td class="v ${verdictClass(c)}">${escape(c.verdict)}${c.severity ? ` (${escape(c.severity)})` : ''}</td><td><a href="#check-${escape(c.id)}">${escape(c.id)}</a></td><td>${escape(c.title)}<div class="guards">${escape(c.guards)}</div></td><td>${escape(c.detail)}</td></tr>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>mcp-continuity probe: ${escape(report.url)}</title><style>${CSS}</style></head>
<body>
<h1>mcp-continuity probe</h1>
<p class="meta">${escape(report.url)} · ${escape(s.name ?? 'unnamed server')} · protocol ${escape(s.protocolVersion ?? '?')}${s.stateless ? ' · stateless' : ''} · streaming tool: ${escape(s.tool ?? 'none found')} · ${escape(report.startedAt)}</p>
<p id="overall" class="v ${report.overall.exitCode === 0 ? 'pass' : 'FAIL'}">overall: ${escape(report.overall.line)}</p>
<p>${escape(report.overall.remediation)}</p>
<p class="meta">era ${escape(s.era)}: ${escape(s.eraEvidence)}</p>
<p><strong class="pass">${t.pass} pass</strong> · <strong class="FAIL">${t.FAIL} FAIL</strong> · <span class="na">${t['n/a']} not applicable</span></p>
<table id="verdicts"><thead><tr><th>verdict</th><th>check</th><th>what it guards against</th><th>result</th></tr></thead><tbody>
${rows}
</tbody></table>
${report.checks.map(section).join('\n')}
</body></html>
`;
}
