/**
 * The probe's report card: runs `probe` against real servers and prints a Markdown table
 * of their overall verdicts (the table in docs/probe.md). Needs `npm run build` first (our
 * `serve` runs from dist/) and Redis at 127.0.0.1:6379 for the Redis row.
 *
 *   npx tsx scripts/probe-report-card.ts
 */
import { runProbe } from '../src/cli/probe/run.js';
import { SUBJECTS } from './report-card/servers.js';

// mcp-proxy (fastmcp's HTTP layer) logs every request to the console; keep the table readable.
const log = console.log.bind(console);
console.log = (...args: unknown[]) => {
  if (!(typeof args[0] === 'string' && args[0].startsWith('[mcp-proxy]'))) log(...args);
};

const rows: string[] = ['| server | era | overall verdict | exit | FAILs (severity) |', '|---|---|---|---|---|'];
for (const subject of SUBJECTS) {
  process.stderr.write(`probing ${subject.name} …\n`);
  let running;
  try {
    running = await subject.start();
  } catch (error) {
    rows.push(`| ${subject.name} | | could not start: ${(error as Error).message.split('\n')[0]} | | |`);
    continue;
  }
  try {
    const report = await runProbe({ url: running.url, timeoutMs: 10_000 });
    const fails =
      report.checks
        .filter((c) => c.verdict === 'FAIL')
        .map((c) => `${c.id} (${c.severity ?? '?'})`)
        .join(', ') || 'none';
    rows.push(`| ${subject.name} | ${report.server.era} | ${report.overall.line.split('; also')[0]} | ${report.overall.exitCode} | ${fails} |`);
  } catch (error) {
    rows.push(`| ${subject.name} | | probe failed: ${(error as Error).message.split('\n')[0]} | 1 | |`);
  } finally {
    await running.stop();
  }
}
log(rows.join('\n'));
process.exit(0);
