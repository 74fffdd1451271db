/**
 * The probe's output can be trusted as output: complete when piped (5 MB of JSON, 20 runs),
 * bounded in memory against endless streams, and free of the secrets it was given.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHostileProbeServer } from '../helpers/hostile-probe-server.js';
import { ROOT, collect, runCli } from './run-cli.js';

const DIST = join(ROOT, 'dist/cli/main.js');

test('probe --json piped is complete, valid JSON at 5 MB, in 20 of 20 runs', { timeout: 300_000 }, async (t) => {
  assert.ok(existsSync(DIST), 'run npm run build first: this test runs the built CLI');
  const server = await startHostileProbeServer('big-name', { bigName: 5_000_000 });
  t.after(() => server.close());
  for (let run = 1; run <= 20; run++) {
    // The built CLI, its stdout a pipe that the test reads as it comes (like `| wc -c`).
    const child = spawn(process.execPath, [DIST, 'probe', server.url.href, '--json', '--timeout', '5000'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const r = await collect(child, 120_000);
    assert.ok(r.stdout.length > 5_000_000, `run ${run}: ${r.stdout.length} bytes (${r.stderr})`);
    const report = JSON.parse(r.stdout) as { server: { name: string } };
    assert.equal(report.server.name.length, 5_000_000, `run ${run}`);
  }
});

/** Runs the probe under /usr/bin/time; its peak RSS, MB. */
async function peakRssMb(args: string[]): Promise<{ mb: number; stdout: string; stderr: string }> {
  const child = spawn('/usr/bin/time', ['-f', 'peak-rss-kb %M', process.execPath, DIST, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const r = await collect(child, 120_000);
  const kb = /peak-rss-kb (\d+)/.exec(r.stderr)?.[1];
  assert.ok(kb !== undefined, r.stderr);
  return { mb: Number(kb) / 1024, stdout: r.stdout, stderr: r.stderr };
}

for (const fault of ['endless-line', 'endless-events'] as const) {
  test(
    `against ${fault === 'endless-line' ? 'one endless data: line' : 'endless small events'}, the probe's peak RSS stays under 150 MB`,
    { timeout: 180_000 },
    async (t) => {
      assert.ok(existsSync(DIST), 'run npm run build first');
      const server = await startHostileProbeServer(fault);
      t.after(() => server.close());
      const { mb, stdout } = await peakRssMb(['probe', server.url.href, '--json', '--tool', 'emit', '--timeout', '10000']);
      const report = JSON.parse(stdout) as { checks: { id: string; detail: string }[] };
      const resume = report.checks.find((c) => c.id === 'resume-post');
      assert.match(resume?.detail ?? '', /past the bounds the probe and the client transport keep/);
      assert.ok(mb < 150, `peak RSS ${mb.toFixed(0)} MB`);
    },
  );
}

test('a secret passed with --header, or in the URL, occurs 0 times in the JSON, JUnit and HTML outputs', { timeout: 120_000 }, async (t) => {
  const server = await startHostileProbeServer('none');
  t.after(() => server.close());
  const dir = mkdtempSync(join(tmpdir(), 'mcpc-probe-secret-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const token = 'sk-live-7Hq2Xr9vT1pW5';
  const password = 'pw-Zq81Lm44';
  const url = new URL(server.url.href);
  url.username = 'probe-user';
  url.password = password;
  url.searchParams.set('api_key', 'key-Wy66Tn30');
  const junit = join(dir, 'probe.xml');
  const html = join(dir, 'probe.html');
  const r = await runCli(
    ['probe', url.href, '--json', '--junit', junit, '--report', html, '--header', `Authorization: Bearer ${token}`, '--header', `X-Api-Key: ${token}-2`],
    { timeoutMs: 100_000 },
  );
  const outputs = { json: r.stdout, junit: readFileSync(junit, 'utf8'), html: readFileSync(html, 'utf8'), stderr: r.stderr };
  assert.ok(outputs.json.length > 1000 && outputs.html.includes('</html>'), r.stderr);
  for (const [name, text] of Object.entries(outputs)) {
    for (const secret of [token, password, 'key-Wy66Tn30', 'probe-user']) assert.equal(text.split(secret).length - 1, 0, `${secret} in ${name}`);
  }
  assert.match(outputs.json, /\[redacted\]/);
});
