/**
 * The fault harness: seeded scenarios over real processes and sockets, each run checked
 * for lost, duplicated, reordered and unexpected events; prints a summary table and the
 * seed of every failing run. Exit code 1 if any run failed.
 *
 *   npm run faults                      # the short profile (also part of npm test)
 *   npm run faults -- --long            # about ten times the runs (see docs/hardening.md)
 *   npm run faults -- --only cut/sqlite/rst/mid-utf8 --seed 12345   # replay one run
 *   (malformed Host headers are part of every profile)
 *   --seed-base N   a different seed stream;  --budget-ms N   stop starting runs after N ms
 */
import { parseArgs } from 'node:util';
import { longProfile, shortProfile } from '../test/faults/harness/profiles.js';
import { formatTable, runProfile } from '../test/faults/harness/run.js';

const { values } = parseArgs({
  options: {
    long: { type: 'boolean', default: false },
    only: { type: 'string' },
    seed: { type: 'string' },
    'seed-base': { type: 'string', default: '20261130' },
    'budget-ms': { type: 'string' },
  },
});

const profile = values.long ? longProfile({ malformedHosts: true }) : shortProfile();
const { rows, elapsedMs, truncated } = await runProfile(profile.families, {
  runs: profile.runs,
  seed: Number(values['seed-base']),
  only: values.only,
  exactSeed: values.seed === undefined ? undefined : Number(values.seed),
  budgetMs: values['budget-ms'] === undefined ? profile.budgetMs : Number(values['budget-ms']),
  runTimeoutMs: 60_000,
  log: (line) => process.stderr.write(`${line}\n`),
});
process.stdout.write(`${formatTable(rows, elapsedMs)}\n`);
if (truncated) process.stdout.write('(stopped at the time budget: some scenarios ran fewer runs)\n');
const failed = rows.some((r) => r.failures.length > 0);
process.exitCode = failed ? 1 : 0;
