/**
 * `node --import tsx bench/telemetry-ab.ts <before-checkout> <after-checkout> [rounds]`: what
 * instrumentation costs when no OpenTelemetry SDK is registered. Runs the 100 B cells of
 * `npm run bench` against the bench server of two checkouts (the commit before the telemetry
 * and the one that added it), plus a second copy of the first for scale, in interleaved rounds.
 */
import { resolve } from 'node:path';
import { startServer } from './proc.js';
import { runCell, type Cell } from './throughput.js';

const [beforeDir, afterDir] = [process.argv[2], process.argv[3]];
if (!beforeDir || !afterDir) throw new Error('usage: telemetry-ab.ts <before-checkout> <after-checkout> [rounds]');
const rounds = Number(process.argv[4] ?? 5);
const BURST = Number(process.argv[5] ?? 20_000);
const cells: Cell[] = [
  { payload: 100, sessions: 1, burst: BURST },
  { payload: 100, sessions: 32, burst: BURST },
];
const script = (dir: string): string => resolve(dir, 'bench/server.ts');
const before = await startServer('memory', {}, script(beforeDir));
const after = await startServer('memory', {}, script(afterDir));
const control = await startServer('memory', {}, script(beforeDir));
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const delta = (a: number, b: number): string => `${(((b - a) / a) * 100).toFixed(1)}%`;
try {
  for (const cell of cells) {
    const [a, b, c] = await runCell([before, after, control], cell, rounds, () => {});
    if (!a || !b || !c) throw new Error('a cell without results');
    const [ea, eb, ec] = [a, b, c].map((x) => median(x.rounds.map((r) => r.eventsPerSec))) as [number, number, number];
    const [ca, cb] = [a, b].map((x) => median(x.rounds.map((r) => r.cpuUsPerEvent))) as [number, number];
    console.log(
      `cell ${cell.payload} B x ${cell.sessions} session(s), ${rounds} rounds: events/s ${ea.toFixed(0)} -> ${eb.toFixed(0)} (${delta(ea, eb)}), ` +
        `server CPU us/event ${ca.toFixed(2)} -> ${cb.toFixed(2)} (${delta(ca, cb)}); before vs before: events/s ${delta(ea, ec)}`,
    );
  }
} finally {
  await before.close();
  await after.close();
  await control.close();
}
