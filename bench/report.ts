/** The markdown rendering of one run's results. */
import type { Results } from './results.js';
import { bytes, fmt, fmtSpread } from './stats.js';
import type { CellResult } from './throughput.js';
import { CONTENDERS, LABELS } from './workload.js';

export type { Profile, Results } from './results.js';

const SIZE: Record<number, string> = { 100: '100 B', 4096: '4 KiB', 65536: '64 KiB' };

function throughputTable(cells: readonly CellResult[]): string {
  const keys = [...new Set(cells.map((c) => `${c.payload}|${c.sessions}|${c.burst}`))];
  const head =
    '| contender | ' +
    keys
      .map((k) => {
        const [p, s, b] = k.split('|').map(Number) as [number, number, number];
        return `${SIZE[p] ?? p}, ${s} sess., ${b.toLocaleString('en-US')} ev`;
      })
      .join(' | ') +
    ' |';
  const sep = '|---|' + keys.map(() => '---|').join('');
  const rows = CONTENDERS.filter((c) => cells.some((x) => x.contender === c)).map((contender) => {
    const vals = keys.map((k) => {
      const c = cells.find((x) => x.contender === contender && `${x.payload}|${x.sessions}|${x.burst}` === k);
      if (!c) return '';
      return `${fmt(c.eventsPerSec.median)} <sub>(${fmt(c.eventsPerSec.min)}–${fmt(c.eventsPerSec.max)})</sub><br>${fmt(c.cpuUsPerEvent.median)} µs · p50/p99 ${fmt(c.p50Ms.median)}/${fmt(c.p99Ms.median)} ms · eld ${fmt(c.eldP99Ms.median)} ms${c.resumes ? ` · ${c.resumes} resumes` : ''}`;
    });
    return `| ${LABELS[contender]} | ${vals.join(' | ')} |`;
  });
  return [head, sep, ...rows].join('\n');
}

export function renderMarkdown(r: Results): string {
  const out: string[] = [];
  out.push(
    `Profile \`${r.profile.name}\`, ${r.profile.rounds} interleaved rounds after a warm-up; ${r.startedAt}; ${r.durationS.toFixed(0)} s; Node ${r.machine.node}, ${r.machine.cpus} × ${r.machine.cpu}, load ${r.machine.loadavg.map((x) => x.toFixed(1)).join('/')} at start.`,
  );
  out.push('');
  if (r.failures.length) {
    out.push('**Failed measurements:**');
    for (const f of r.failures) out.push(`- ${f}`);
    out.push('');
  }
  out.push('### Targets');
  out.push('');
  if (r.profile.name === 'quick') {
    out.push(
      'The quick profile is a smoke run: its short bursts (2,000 events) measure JIT warm-up and per-request costs more than steady delivery. The targets are judged on the full profile.',
    );
    out.push('');
  }
  out.push('| | target | measured | bound |');
  out.push('|---|---|---|---|');
  for (const t of r.targets) out.push(`| ${t.status} | ${t.name.replace(/^\d\. /, '')} | ${t.measured} | ${t.bound} |`);
  out.push('');
  out.push('### Throughput and latency');
  out.push('');
  out.push(
    'Each cell: events/s, median (min–max) of the rounds; server CPU µs per event; event latency p50/p99 (tool send → client read); server event-loop delay p99.',
  );
  out.push('');
  for (const payload of [...new Set(r.throughput.map((c) => c.payload))]) {
    out.push(`#### ${SIZE[payload] ?? payload}`);
    out.push('');
    out.push(throughputTable(r.throughput.filter((c) => c.payload === payload)));
    out.push('');
  }
  if (r.replay.length) {
    out.push('### Resumption');
    out.push('');
    out.push('| store | log | last 40 events, ms | events returned | full replay, ms | SQLite bytes/event |');
    out.push('|---|---|---|---|---|---|');
    for (const x of r.replay) {
      out.push(
        `| ${x.store} | ${x.events.toLocaleString('en-US')} | ${fmtSpread(x.last40Ms)} | ${x.last40Events} | ${x.fullMs ? fmtSpread(x.fullMs) : ''} | ${x.sqliteBytesPerEvent ? fmt(x.sqliteBytesPerEvent) : ''} |`,
      );
    }
    out.push('');
    if (r.requestFloorMs) {
      out.push(
        `The floor under these times, in the same run: a GET for an unknown session on a fresh connection (→ 404), timed the same way: ${fmtSpread(r.requestFloorMs)} ms.`,
      );
      out.push('');
    }
  }
  if (r.refusal) {
    out.push(`Detection and refusal at the upgrade boundary (resume while an upgrade is pending → ${r.refusal.refusedAs}): ${fmtSpread(r.refusal.ms)} ms.`);
    out.push('');
  }
  if (r.idle.length) {
    out.push('### Idle sessions');
    out.push('');
    out.push('| contender | sessions | RSS per idle session | passivated |');
    out.push('|---|---|---|---|');
    for (const x of r.idle)
      out.push(`| ${LABELS[x.contender]} | ${x.sessions.toLocaleString('en-US')} | ${bytes(x.bytesPerSession)} | ${x.passivated ? 'yes' : 'no'} |`);
    out.push('');
  }
  if (r.verify.length) {
    out.push('### Client verification');
    out.push('');
    out.push('| payload | events | verifier path µs/event | our transport µs/event | overhead | SDK `Client` on our transport µs/event | overhead |');
    out.push('|---|---|---|---|---|---|---|');
    for (const v of r.verify) {
      out.push(
        `| ${SIZE[v.payload] ?? v.payload} | ${v.events.toLocaleString('en-US')} | ${fmt(v.verifierUsPerEvent)} | ${fmt(v.clientUsPerEvent)} | ${(v.overhead * 100).toFixed(1)} % | ${fmt(v.sdkClientUsPerEvent)} | ${(v.sdkOverhead * 100).toFixed(1)} % |`,
      );
    }
    out.push('');
  }
  for (const e of r.extra) {
    out.push(`### ${e.title}`);
    out.push('');
    out.push(e.markdown);
    out.push('');
  }
  return out.join('\n');
}
