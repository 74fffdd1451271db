/**
 * `node --import tsx bench/eras-ab.ts [rounds]`: what mounting the 2026-07-28 leg costs the
 * 2025-era path. Two memory-store servers, one with `modern` and one without, run the same
 * throughput cells in interleaved rounds (bench/throughput.ts), and the same request floor
 * (a resume GET answered 404), so load on the machine falls on both alike.
 */
import { startServer } from './proc.js';
import { runCell, type Cell } from './throughput.js';
import { replay } from './client.js';

const rounds = Number(process.argv[2] ?? 5);
const all: Cell[] = [
  { payload: 100, sessions: 1, burst: 20_000 },
  { payload: 4096, sessions: 1, burst: 20_000 },
  { payload: 100, sessions: 32, burst: 20_000 },
  { payload: 100, sessions: 1000, burst: 20_000 },
];
const cells = process.argv[3] === 'first' ? all.slice(0, 1) : all;
const plain = await startServer('memory');
const both = await startServer('memory', { modern: true });
// A second plain server: the spread between two identical processes, for scale.
const control = await startServer('memory');
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const delta = (a: number, b: number): string => `${(((b - a) / a) * 100).toFixed(1)}%`;
try {
  for (const cell of cells) {
    const [a, b, c] = await runCell([plain, both, control], cell, rounds, () => {});
    if (!a || !b || !c) throw new Error('a cell without results');
    const ec = median(c.rounds.map((r) => r.eventsPerSec));
    const ea = median(a.rounds.map((r) => r.eventsPerSec));
    const eb = median(b.rounds.map((r) => r.eventsPerSec));
    const ca = median(a.rounds.map((r) => r.cpuUsPerEvent));
    const cc = median(c.rounds.map((r) => r.cpuUsPerEvent));
    const cb = median(b.rounds.map((r) => r.cpuUsPerEvent));
    console.log(
      `cell ${cell.payload} B x ${cell.sessions} sessions, burst ${cell.burst}, ${rounds} rounds: events/s ${ea.toFixed(0)} -> ${eb.toFixed(0)} (${delta(ea, eb)}), CPU us/event ${ca.toFixed(2)} -> ${cb.toFixed(2)} (${delta(ca, cb)}); plain vs plain: events/s ${delta(ea, ec)}, CPU ${delta(ca, cc)}`,
    );
  }
  const floor = { plain: [] as number[], both: [] as number[] };
  for (let i = 0; i < 200 * rounds; i++) {
    for (const [name, server] of i % 2 === 0
      ? ([
          ['plain', plain],
          ['both', both],
        ] as const)
      : ([
          ['both', both],
          ['plain', plain],
        ] as const)) {
      const r = await replay(server.url, { id: 'no-such-session', protocolVersion: '2025-11-25' }, 'x', 1);
      if (r.status !== 404) throw new Error(`request floor: expected 404, got ${r.status}`);
      floor[name].push(r.ms);
    }
  }
  console.log(
    `request floor (resume GET, 404), median of ${floor.plain.length}: ${median(floor.plain).toFixed(3)} ms -> ${median(floor.both).toFixed(3)} ms (${delta(median(floor.plain), median(floor.both))})`,
  );
} finally {
  await plain.close();
  await both.close();
  await control.close();
}
