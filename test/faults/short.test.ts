/**
 * The fault harness's short profile: about a thousand seeded runs over the whole matrix
 * (cuts at exact wire positions by FIN, RST and stall on memory and SQLite; forged,
 * foreign, future, trimmed, other-epoch and tampered cursors; bad Hosts and Origins; logs
 * trimmed under a reader; kill -9 and restart; the upgrade cut at each phase; a hostile
 * server for the client). Every count must be 0 and every run must end as its scenario
 * says. Prints the table.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { shortProfile } from './harness/profiles.js';
import { formatTable, runProfile } from './harness/run.js';

test('fault harness, short profile: ≥ 1,000 seeded runs, every count 0', { timeout: 10 * 60_000 }, async () => {
  const profile = shortProfile();
  const { rows, elapsedMs, truncated } = await runProfile(profile.families, {
    runs: profile.runs,
    seed: Number(process.env.FAULTS_SEED ?? 20261130),
    budgetMs: profile.budgetMs,
    runTimeoutMs: 60_000,
  });
  const table = formatTable(rows, elapsedMs);
  process.stdout.write(
    `${table
      .split('\n')
      .map((l) => `# ${l}`)
      .join('\n')}\n`,
  );
  const runs = rows.reduce((n, r) => n + r.runs, 0);
  assert.equal(truncated, false, 'the profile ran to the end within its time budget');
  assert.ok(runs >= 1000, `${runs} runs`);
  const failures = rows.flatMap((r) => r.failures.map((f) => `${r.scenario} --seed ${f.seed}: ${f.why}`));
  assert.deepEqual(failures.slice(0, 20), [], table);
});
