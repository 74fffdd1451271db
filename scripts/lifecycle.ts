/**
 * The lifecycle harness: seeded schedules of SIGTERM, kill -9, SIGSTOP past the
 * lease, replacements, TCP cuts and pub/sub kills against real `serve` clusters behind
 * nginx or the round-robin proxy, with our client and the SDK's, every history checked.
 * Needs the build (`npx tsc -p tsconfig.json`): the replicas run dist/cli/main.js.
 *
 *   npm run lifecycle                          # the quick profile: 100 schedules, about 5 minutes
 *   npm run lifecycle -- --profile long        # 2,000 schedules (docs/hardening.md)
 *   npm run lifecycle -- --runs 500            # any number
 *   npm run lifecycle -- --seed 1234           # replay one schedule (--repeat N: N times)
 *   --mutate M      switch a guarantee off (double-run, level, drop-log, hang): the run must fail
 *   --seed-base N   another seed stream;  --budget-ms N   stop starting schedules after N ms
 *   --out DIR       write each failing schedule's full history there (JSON); --keep-all: every schedule's
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { failureReport, PROFILES, summary } from '../test/lifecycle/report.js';
import { MUTATIONS, type Mutation } from '../test/lifecycle/clients.js';
import { runSeeds } from '../test/lifecycle/run.js';

// Ctrl-C: exit through 'exit', where every replica still running is killed.
process.once('SIGINT', () => process.exit(130));

const { values } = parseArgs({
  options: {
    profile: { type: 'string', default: 'quick' },
    runs: { type: 'string' },
    seed: { type: 'string' },
    'seed-base': { type: 'string', default: '33000' },
    'budget-ms': { type: 'string' },
    out: { type: 'string' },
    mutate: { type: 'string' },
    repeat: { type: 'string', default: '1' },
    'keep-all': { type: 'boolean', default: false },
  },
});

const profile = PROFILES[values.profile as keyof typeof PROFILES];
if (profile === undefined) throw new Error(`--profile is quick or long, not ${values.profile}`);
const mutation = values.mutate as Mutation | undefined;
if (mutation !== undefined && !MUTATIONS.includes(mutation)) throw new Error(`--mutate is one of ${MUTATIONS.join(', ')}`);
const runs = values.runs === undefined ? profile.runs : Number(values.runs);
const base = Number(values['seed-base']);
// A replay reruns the schedule, not its timing: --repeat runs it several times.
const seeds =
  values.seed === undefined ? Array.from({ length: runs }, (_, i) => base + i) : Array.from({ length: Number(values.repeat) }, () => Number(values.seed));
const budgetMs = values['budget-ms'] === undefined ? (values.seed === undefined ? profile.budgetMs : 10 * 60_000) : Number(values['budget-ms']);

const { results, elapsedMs, skipped } = await runSeeds({
  seeds,
  budgetMs,
  maxOps: profile.maxOps,
  mutation,
  log: (line) => process.stderr.write(`${line}\n`),
  onResult: (r) => {
    const failed = r.violations.length > 0 || r.error !== undefined;
    process.stderr.write(
      `${failed ? 'FAIL' : 'ok  '} seed ${r.schedule.seed} ${(r.elapsedMs / 1000).toFixed(1)} s, ${r.calls} calls${failed ? `, ${r.violations.length} violation(s)` : ''}\n`,
    );
    if ((failed || values['keep-all']) && values.out) {
      mkdirSync(values.out, { recursive: true });
      writeFileSync(join(values.out, `seed-${r.schedule.seed}.json`), JSON.stringify(r, null, 1));
    }
  },
});
const failing = results.filter((r) => r.violations.length > 0 || r.error !== undefined);
for (const r of failing) process.stdout.write(`\n${failureReport(r, values.profile as keyof typeof PROFILES)}\n`);
process.stdout.write(`\n${summary(results, elapsedMs, skipped)}\n`);
process.exitCode = failing.length > 0 ? 1 : 0;
