/**
 * The official conformance suite (server scenarios, pending included) against
 * `mcp-continuity serve`, judged against conformance/baseline.json by the script.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

test('conformance server scenarios match the baseline, server-sse-polling all successes', { timeout: 240_000 }, () => {
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/conformance.ts'], { cwd: root, encoding: 'utf8', timeout: 230_000 });
  const output = `${run.stdout}\n${run.stderr}`;
  assert.equal(run.status, 0, output);
  assert.match(run.stdout, /conformance: \d+ passed, 0 failed/, output);
});
