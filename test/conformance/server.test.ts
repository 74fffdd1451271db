/**
 * The official conformance suite, all three pinned lines (0.1.13 on this Node; 0.1.16, npm's
 * `latest`, and 0.2.x on their own Node 22, installed at run time), server and client
 * scenarios, judged against conformance/baseline.json, baseline-latest.json and
 * baseline-next.json by scripts/conformance.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

test('conformance: every suite line matches its baseline, server-sse-polling all successes', { timeout: 400_000 }, () => {
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/conformance.ts'], { cwd: root, encoding: 'utf8', timeout: 390_000 });
  const output = `${run.stdout}\n${run.stderr}`;
  assert.equal(run.status, 0, output);
  assert.match(run.stdout, /^conformance: ok$/m, output);
  assert.match(run.stdout, /^conformance current \(\S+\): \d+ passed, 0 failed/m, output);
  // The Node-22 lines are skipped only off CI, and only when their install failed (offline).
  for (const [line, version] of [['latest', /0\.1\.\S+/], ['next', /0\.2\.\S+/]] as const) {
    if (process.env.CI === 'true' || !new RegExp(`^conformance ${line}: SKIPPED`, 'm').test(run.stdout)) {
      assert.match(run.stdout, new RegExp(`^conformance ${line} \\(${version.source}\\): \\d+ passed, 0 failed`, 'm'), output);
    }
  }
});
