/**
 * The official conformance suite, both pinned lines (0.1.x on this Node; 0.2.x on its own
 * Node 22, installed at run time), server and client scenarios, judged against
 * conformance/baseline.json and conformance/baseline-next.json by scripts/conformance.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

test('conformance: both suite lines match their baselines, server-sse-polling all successes', { timeout: 400_000 }, () => {
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/conformance.ts'], { cwd: root, encoding: 'utf8', timeout: 390_000 });
  const output = `${run.stdout}\n${run.stderr}`;
  assert.equal(run.status, 0, output);
  assert.match(run.stdout, /^conformance: ok$/m, output);
  assert.match(run.stdout, /^conformance current \(\S+\): \d+ passed, 0 failed/m, output);
  if (process.env.CI === 'true' || !/conformance next: SKIPPED/.test(run.stdout)) {
    assert.match(run.stdout, /^conformance next \(0\.2\.\S+\): \d+ passed, 0 failed/m, output);
  }
});
