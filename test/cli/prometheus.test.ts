/**
 * The shipped alerting rules load into a real `promtool check rules`, the shipped Grafana
 * dashboard is valid JSON that queries only metrics `serve` exports, and a real Prometheus
 * scraping `serve --metrics` stores the continuity metrics. Needs Debian's `prometheus`
 * package (promtool and prometheus): under CI=true its absence fails; elsewhere it skips,
 * saying so.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, startCli, stop } from './run-cli.js';
import { freePort } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';

const RULES = join(ROOT, 'deploy/prometheus/mcp-continuity.rules.yml');
const DASHBOARD = join(ROOT, 'deploy/grafana/mcp-continuity.json');

function has(command: string): boolean {
  return spawnSync(command, ['--version'], { stdio: 'ignore' }).status === 0;
}

/** Skips loudly, or fails under CI (where .ci/run installs the package). */
function need(t: { skip(message: string): void; diagnostic(message: string): void }, command: string): boolean {
  if (has(command)) return true;
  const message = `${command} is not installed (apt-get install -y prometheus)`;
  assert.ok(process.env['CI'] !== 'true', `${message}: .ci/run installs it, so CI must have it`);
  t.diagnostic(`SKIPPED: ${message}`);
  t.skip(message);
  return false;
}

test('the shipped alerting rules pass promtool check rules', { timeout: 60_000 }, async (t) => {
  if (!need(t, 'promtool')) return;
  const out = await new Promise<{ code: number; text: string }>((resolve) => {
    execFile('promtool', ['check', 'rules', RULES], (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, text: stdout + stderr }));
  });
  assert.equal(out.code, 0, out.text);
  assert.match(out.text, /SUCCESS: \d+ rules found/);
  const rules = readFileSync(RULES, 'utf8');
  for (const covered of ['resumes_total', 'client_divergences_total', 'refusals_total', 'takeovers_total', 'drains_total'])
    assert.ok(rules.includes(`mcp_continuity_${covered.startsWith('client') ? covered : `server_${covered}`}`), `an alert on ${covered}`);
});

test('the shipped Grafana dashboard is JSON whose queries name exported metrics', () => {
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as { panels: { targets: { expr: string }[] }[] };
  const exprs = dashboard.panels.flatMap((p) => p.targets.map((x) => x.expr));
  assert.ok(exprs.length > 10);
  const names = new Set(exprs.flatMap((e) => e.match(/\b(mcp_[a-z_]+)(?=\{)/g) ?? []));
  for (const name of names)
    assert.match(name, /^mcp_(server|continuity)_[a-z_]+(_total|_seconds_count|_seconds_bucket|_bytes)$/, `${name} is a name the exporter writes`);
});

test('a real Prometheus scraping serve --metrics stores the continuity metrics', { timeout: 180_000 }, async (t) => {
  if (!need(t, 'prometheus')) return;
  const { child, line } = await startCli(['serve', '--port', '0', '--store', 'memory', '--metrics', '127.0.0.1:0', '--log-format', 'json']);
  t.after(() => stop(child));
  const listening = JSON.parse(line) as { url: string; metrics: string };
  // One refusal, so a continuity counter has a sample: a POST for a session this server never had.
  const refused = await fetch(listening.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': 'none',
      'mcp-protocol-version': '2025-11-25',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  assert.equal(refused.status, 404);
  await refused.text();

  const dir = mkdtempSync(join(tmpdir(), 'mcpc-prom-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const target = new URL(listening.metrics).host;
  writeFileSync(
    join(dir, 'prometheus.yml'),
    `global:\n  scrape_interval: 1s\nrule_files:\n  - ${RULES}\nscrape_configs:\n  - job_name: mcp-continuity\n    static_configs:\n      - targets: ['${target}']\n`,
  );
  const port = await freePort();
  const prometheus = spawn(
    'prometheus',
    [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  prometheus.stderr.setEncoding('utf8').on('data', (c: string) => (log += c));
  t.after(async () => {
    if (prometheus.exitCode !== null) return;
    const gone = new Promise((resolve) => prometheus.once('exit', resolve));
    prometheus.kill('SIGKILL');
    await gone;
  });
  const query = async (q: string): Promise<{ metric: Record<string, string>; value: [number, string] }[] | undefined> => {
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(q)}`).catch(() => undefined);
    if (!res?.ok) return undefined;
    const body = (await res.json()) as { data: { result: { metric: Record<string, string>; value: [number, string] }[] } };
    return body.data.result;
  };
  const refusals = await waitFor(
    async () => {
      const result = await query('mcp_continuity_server_refusals_total{job="mcp-continuity"}');
      return result !== undefined && result.length > 0 && result;
    },
    () => `Prometheus to store a scrape of ${listening.metrics}; its log:\n${log.slice(-2000)}`,
    90_000,
  );
  assert.equal(refusals[0]?.metric['error_type'], 'session-not-found');
  assert.equal(Number(refusals[0]?.value[1]), 1);
  const info = await query('target_info{job="mcp-continuity"}');
  assert.equal(info?.[0]?.metric['service_name'], 'mcp-continuity', 'the service name when OTEL_SERVICE_NAME is unset');
  const rules = (await (await fetch(`http://127.0.0.1:${port}/api/v1/rules`)).json()) as { data: { groups: { rules: unknown[] }[] } };
  assert.ok((rules.data.groups[0]?.rules.length ?? 0) > 0, 'Prometheus loaded the shipped rules');
});
