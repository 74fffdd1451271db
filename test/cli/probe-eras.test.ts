/**
 * Era detection on a dual-era URL (the SDK v2's documented routing, our endpoint as the
 * 2025-era leg): the probe must say "dual" and audit the sessionful leg, which resumes safely.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ProbeReport } from '../../src/cli/probe/model.js';
import { startDualEraServer } from '../helpers/dual-era-server.js';
import { runCli } from './run-cli.js';

test('a dual-era server is detected as dual, and its 2025-era leg is audited', { timeout: 120_000 }, async (t) => {
  const server = await startDualEraServer();
  t.after(() => server.close());
  const r = await runCli(['probe', server.url.href, '--json'], { timeoutMs: 110_000 });
  const report = JSON.parse(r.stdout) as ProbeReport;
  assert.equal(report.server.era, 'dual', report.server.eraEvidence);
  assert.match(report.server.eraEvidence, /the 2025-era leg is audited/);
  assert.equal(report.checks.find((c) => c.id === 'resume-post')?.verdict, 'pass', 'the sessionful leg was probed');
  assert.deepEqual(
    report.checks.filter((c) => c.verdict === 'FAIL').map((c) => `${c.id}: ${c.detail}`),
    [],
  );
  assert.equal(report.overall.line, 'resumes safely');
  assert.equal(r.code, 0);
});
