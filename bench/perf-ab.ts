/**
 * `node --import tsx bench/perf-ab.ts <before-checkout> <after-checkout> [rounds] [cells]`: one
 * performance lever, A/B in one run. Each store runs three servers side by side: the bench
 * server of the checkout before the change (A), of the one with it (B), and a second copy
 * of A (the A-vs-A control, which shows what the machine's noise alone does). They serve the
 * same throughput cells in interleaved rounds (bench/throughput.ts rotates the order each
 * round), so load on the shared machine falls on all three alike.
 *
 * Prints, per cell: median events/s and server CPU µs per event of A, B and the control, each
 * with the spread of its rounds (lowest–highest), and the B-vs-A and A-vs-A deltas.
 * `cells`: comma-separated `store:payload:sessions`, default the cells the levers aim at.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startServer } from './proc.js';
import { runCell } from './throughput.js';
import type { Contender } from './workload.js';

const [beforeDir, afterDir] = [process.argv[2], process.argv[3]];
if (!beforeDir || !afterDir) throw new Error('usage: perf-ab.ts <before-checkout> <after-checkout> [rounds] [store:payload:sessions,...]');
const rounds = Number(process.argv[4] ?? 7);
const spec = process.argv[5] ?? 'memory:65536:1,sqlite:65536:1,memory:4096:1,sqlite:4096:1,memory:65536:32';
const BURST: Record<number, number> = { 100: 20_000, 4096: 20_000, 65536: 2_000 };

const script = (dir: string): string => resolve(dir, 'bench/server.ts');
const sorted = (xs: number[]): number[] => [...xs].sort((a, b) => a - b);
const median = (xs: number[]): number => sorted(xs)[Math.floor(xs.length / 2)] as number;
const spread = (xs: number[], digits: number): string => {
  const s = sorted(xs);
  return `${median(xs).toFixed(digits)} (${(s[0] as number).toFixed(digits)}–${(s[s.length - 1] as number).toFixed(digits)})`;
};
const delta = (a: number, b: number): string => `${b >= a ? '+' : ''}${(((b - a) / a) * 100).toFixed(1)}%`;

const dir = mkdtempSync(join(tmpdir(), 'mcp-perf-ab-'));
console.log(`A = ${resolve(beforeDir)}, B = ${resolve(afterDir)}, ${rounds} interleaved rounds per cell; median (lowest–highest round)\n`);
console.log(
  '| cell | A events/s | B events/s | A′ (control) events/s | B vs A | A′ vs A | A CPU µs/event | B CPU µs/event | A′ CPU µs/event | B vs A | A′ vs A |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|---|');
try {
  for (const item of spec.split(',')) {
    const [store, payloadText, sessionsText] = item.split(':');
    const payload = Number(payloadText);
    const sessions = Number(sessionsText);
    const contender = store as Contender;
    const servers = [];
    // Three servers, each with a file of its own (the SQLite store locks its file to one process).
    for (const [i, d] of [beforeDir, afterDir, beforeDir].entries()) {
      servers.push(await startServer(contender, { sqlitePath: join(dir, `${item.replaceAll(':', '-')}-${i}.db`) }, script(d)));
    }
    try {
      const [a, b, c] = await runCell(servers, { payload, sessions, burst: BURST[payload] ?? 2_000 }, rounds, () => {});
      if (!a || !b || !c) throw new Error('a cell without results');
      const ev = [a, b, c].map((x) => x.rounds.map((r) => r.eventsPerSec)) as [number[], number[], number[]];
      const cpu = [a, b, c].map((x) => x.rounds.map((r) => r.cpuUsPerEvent)) as [number[], number[], number[]];
      const [ea, eb, ec] = ev.map(median) as [number, number, number];
      const [ca, cb, cc] = cpu.map(median) as [number, number, number];
      console.log(
        `| ${store} ${payload} B × ${sessions} | ${spread(ev[0], 0)} | ${spread(ev[1], 0)} | ${spread(ev[2], 0)} | ${delta(ea, eb)} | ${delta(ea, ec)} ` +
          `| ${spread(cpu[0], 1)} | ${spread(cpu[1], 1)} | ${spread(cpu[2], 1)} | ${delta(ca, cb)} | ${delta(ca, cc)} |`,
      );
    } finally {
      await Promise.all(servers.map((s) => s.close()));
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
