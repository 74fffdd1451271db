/** Runs the CLI as a real process, from source (tsx) or from `dist/`. */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
/** tsx by absolute URL, so the CLI also runs from another working directory. */
const TSX = import.meta.resolve('tsx');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `mcp-continuity …args` to completion (killed after `timeoutMs`). */
export function runCli(args: string[], options: SpawnOptions & { timeoutMs?: number; wrapper?: string[] } = {}): Promise<CliResult> {
  // `wrapper`: a command that runs the CLI (e.g. setpriv, to drop capabilities).
  const [cmd, ...pre] = options.wrapper ?? [];
  const argv = cliArgv(args);
  const child =
    cmd === undefined
      ? spawn(process.execPath, argv, { cwd: ROOT, ...options, stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn(cmd, [...pre, process.execPath, ...argv], { cwd: ROOT, ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  return collect(child, options.timeoutMs ?? 30_000);
}

/** Node's arguments that run `mcp-continuity …args` from source. */
export function cliArgv(args: string[]): string[] {
  return ['--import', TSX, MAIN, ...args];
}

export function collect(child: ChildProcess, timeoutMs: number): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr?.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise((resolve) => {
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Starts a long-running CLI command; resolves with the child, its first stdout line, and all its stdout so far. */
export async function startCli(args: string[], options: SpawnOptions = {}): Promise<{ child: ChildProcess; line: string; output: () => string }> {
  const child = spawn(process.execPath, ['--import', TSX, MAIN, ...args], { cwd: ROOT, ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let stdout = '';
  child.stderr?.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  child.stdout?.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`mcp-continuity ${args.join(' ')} exited with ${code}: ${stderr}`)));
  });
  return { child, line, output: () => stdout };
}

/** SIGKILL and wait for the exit. */
export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGKILL');
  await gone;
}
