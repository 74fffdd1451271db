/**
 * `serve --metrics` as a real process: a Prometheus scrape after a probe run counts resumes
 * and refusals, `/healthz` and `/readyz` answer, `/readyz` turns 503 once SIGTERM starts
 * the replica's way out, and `--log-format json` writes one line per refusal and divergence
 * naming the replica. `--quiet` keeps errors.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runCli, startCli, stop } from './run-cli.js';
import { waitFor } from '../helpers/wait.js';
import { eventLog } from '../../src/cli/event-log.js';
import { parseHostPort } from '../../src/cli/ops-server.js';
import { ContinuityError } from '../../src/protocol/errors.js';

/** Sums every sample of `name` in a Prometheus text exposition. */
function sample(text: string, name: string): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

test('serve --metrics: a scrape after a probe run counts resumes and refusals; /readyz is 503 while leaving', { timeout: 120_000 }, async (t) => {
  const { child, line, output } = await startCli([
    'serve',
    '--port',
    '0',
    '--store',
    'memory',
    '--metrics',
    '127.0.0.1:0',
    '--log-format',
    'json',
    '--unready-ms',
    '60000',
  ]);
  t.after(() => stop(child));
  const listening = JSON.parse(line) as { event: string; url: string; metrics: string; replica: string };
  assert.equal(listening.event, 'listening');
  assert.match(listening.replica, /^r-/);
  const metrics = new URL(listening.metrics);
  const at = (path: string): URL => new URL(path, metrics);

  assert.equal((await fetch(at('/healthz'))).status, 200);
  const before = await fetch(at('/readyz'));
  assert.equal(before.status, 200, await before.text());

  const probe = await runCli(['probe', listening.url], { timeoutMs: 90_000 });
  assert.equal(probe.code, 0, probe.stdout + probe.stderr);

  const scrape = await fetch(metrics);
  assert.equal(scrape.status, 200);
  const text = await scrape.text();
  assert.ok(sample(text, 'mcp_continuity_server_resumes_total') > 0, text);
  assert.ok(sample(text, 'mcp_continuity_server_refusals_total') > 0, text);
  assert.match(text, /mcp_continuity_server_resumes_total\{mcp_continuity_outcome="resumed"/);
  assert.ok(sample(text, 'mcp_server_operation_duration_seconds_count') > 0, 'the MCP operation histogram is exported');

  // One JSON line per refusal and divergence, each naming this replica.
  const entries = output()
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { event: string; replica: string; code?: string });
  const refusals = entries.filter((e) => e.event === 'refusal' || e.event === 'divergence');
  assert.ok(refusals.length > 0);
  assert.ok(refusals.every((e) => e.replica === listening.replica && typeof e.code === 'string'));
  assert.ok(
    entries.some((e) => e.event === 'divergence'),
    "the probe's forged cursors are logged as divergences",
  );

  // SIGTERM: the replica leaves rotation at once, while it still serves.
  child.kill('SIGTERM');
  await waitFor(async () => (await fetch(at('/readyz'))).status === 503, '/readyz answering 503 after SIGTERM');
  assert.equal((await fetch(at('/healthz'))).status, 200, 'still alive while leaving');
  assert.equal((await fetch(at('/readyz'))).status, 503);
});

test('--metrics takes [HOST:]PORT', () => {
  assert.deepEqual(parseHostPort('9464'), { host: '127.0.0.1', port: 9464 });
  assert.deepEqual(parseHostPort('0.0.0.0:9464'), { host: '0.0.0.0', port: 9464 });
  assert.deepEqual(parseHostPort('[::1]:9464'), { host: '::1', port: 9464 });
  for (const bad of ['', 'x', '99999', 'host:', ':9464x']) assert.throws(() => parseHostPort(bad), /--metrics takes/, bad);
});

test('the event log: --quiet keeps errors, and a store fault is named', () => {
  const lines: string[] = [];
  const log = eventLog({ format: 'json', quiet: true, write: (l) => lines.push(l) });
  log.setReplica('r-test');
  log.hooks.onTakeover?.({ sessionId: 's', token: 2, replicaId: 'r-test' });
  log.onError(new Error('boom'));
  log.onError(new ContinuityError('store-unavailable'));
  assert.equal(lines.length, 2, 'the takeover is not printed under --quiet; both errors are');
  assert.deepEqual(
    { ...JSON.parse(lines[0] as string), time: undefined },
    { time: undefined, level: 'error', event: 'error', message: 'boom', replica: 'r-test' },
  );
  assert.deepEqual([JSON.parse(lines[1] as string).event, JSON.parse(lines[1] as string).code], ['store-fault', 'store-unavailable']);
});

test('serve --log-format rejects an unknown format', async () => {
  const r = await runCli(['serve', '--port', '0', '--store', 'memory', '--log-format', 'yaml']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--log-format takes text or json/);
});
