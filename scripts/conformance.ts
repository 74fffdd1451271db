/**
 * Runs the official conformance suite's server scenarios (pending ones included) against
 * `mcp-continuity serve` and compares the outcome with conformance/baseline.json.
 *
 * Fails when: a check fails that the baseline does not list; a listed check no longer
 * fails (the baseline is stale); or server-sse-polling has any check that is not a
 * success (the reference server only earns warnings there; we must earn successes).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

interface Check { id: string; name: string; status: string; errorMessage?: string }
interface Baseline { suite: string; expectedFailures: Record<string, string>; clientScenarios: string[] }

const root = new URL('..', import.meta.url).pathname;
const baseline = JSON.parse(readFileSync(join(root, 'conformance/baseline.json'), 'utf8')) as Baseline;
const STRICT_SCENARIOS = ['server-sse-polling'];

async function startServer(dbPath: string): Promise<{ url: string; stop: () => void }> {
  // The embedded default store (SQLite), on a file of our own.
  const args = [join(root, 'dist/cli/main.js'), 'serve', '--port', '0', '--quiet', '--store', `sqlite:${dbPath}`];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  const url = await new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`serve exited with ${code} before printing its URL`)));
  });
  return { url, stop: () => child.kill('SIGTERM') };
}

function runSuite(url: string, out: string): Promise<number> {
  const bin = join(root, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
  const child = spawn(process.execPath, [bin, 'server', '--url', url, '--suite', baseline.suite, '-o', out], { stdio: ['ignore', 'ignore', 'inherit'] });
  return new Promise((resolve) => child.once('exit', (code) => resolve(code ?? 1)));
}

function runClientScenario(scenario: string, out: string): Promise<number> {
  const bin = join(root, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
  const command = `${process.execPath} --import tsx ${join(root, 'scripts/conformance-client.ts')}`;
  const child = spawn(process.execPath, [bin, 'client', '--command', command, '--scenario', scenario, '-o', out], { stdio: 'ignore', cwd: root });
  return new Promise((resolve) => child.once('exit', (code) => resolve(code ?? 1)));
}

function scenarioOf(dir: string): string {
  // (server|client)-<scenario>-<ISO timestamp with dashes>
  return dir.replace(/^(server|client)-/, '').replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, '');
}

const out = mkdtempSync(join(tmpdir(), 'mcp-conformance-'));
const dbDir = mkdtempSync(join(tmpdir(), 'mcp-conformance-db-'));
const server = await startServer(join(dbDir, 'conformance.db'));
let failed = 0;
let passed = 0;
const problems: string[] = [];
try {
  const code = await runSuite(server.url, out);
  for (const scenario of baseline.clientScenarios) await runClientScenario(scenario, out);
  const dirs = readdirSync(out);
  if (dirs.length === 0) throw new Error(`conformance suite produced no results (exit ${code})`);
  const seen = new Set<string>();
  for (const dir of dirs.sort()) {
    const scenario = scenarioOf(dir);
    const checks = JSON.parse(readFileSync(join(out, dir, 'checks.json'), 'utf8')) as Check[];
    let scenarioOk = true;
    for (const check of checks) {
      const key = `${scenario}/${check.id}`;
      const listed = key in baseline.expectedFailures;
      if (check.status === 'FAILURE') {
        seen.add(key);
        if (!listed) problems.push(`FAIL ${key}: ${check.errorMessage ?? check.name}`);
        scenarioOk = false;
      } else if (STRICT_SCENARIOS.includes(scenario) && check.status === 'WARNING') {
        problems.push(`WARN ${key} (must be SUCCESS): ${check.errorMessage ?? check.name}`);
        scenarioOk = false;
      }
    }
    if (scenarioOk) passed++;
    else failed++;
    console.log(`${scenarioOk ? 'ok  ' : 'FAIL'} ${scenario} (${checks.filter((c) => c.status === 'SUCCESS').length} checks succeeded)`);
  }
  for (const key of Object.keys(baseline.expectedFailures)) {
    if (!seen.has(key)) problems.push(`STALE baseline entry ${key}: it no longer fails; remove it`);
  }
} finally {
  server.stop();
  rmSync(out, { recursive: true, force: true });
  rmSync(dbDir, { recursive: true, force: true });
}
for (const p of problems) console.log(p);
console.log(`conformance: ${passed} passed, ${failed} failed`);
if (problems.length > 0) process.exitCode = 1;
