/** Runs the files under examples/ as a user would: their own processes, real sockets. */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { within } from '../helpers/wait.js';

export const root = fileURLToPath(new URL('../..', import.meta.url));
/** tsx by URL, so a child can run in any working directory. */
const TSX = import.meta.resolve('tsx');

/** The examples import `mcp-continuity/…` (the package resolves itself to dist/): it must be built. */
export function assertBuilt(): void {
  if (!existsSync(`${root}dist/server/index.js`)) throw new Error('dist/ is missing: run `npm run build` before the examples tests');
}

export function spawnExample(file: string, args: string[], options: { cwd: string; env?: Record<string, string> }): ChildProcess {
  return spawn(process.execPath, ['--import', TSX, `${root}${file}`, ...args], {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Resolves with the first stdout line matching `pattern`; rejects if the process exits first. */
export function lineMatching(child: ChildProcess, pattern: RegExp, what: string): Promise<RegExpExecArray> {
  const stderr: string[] = [];
  child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
  return within(
    new Promise((resolve, reject) => {
      createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
        const match = pattern.exec(line);
        if (match) resolve(match);
      });
      child.once('exit', (code) => reject(new Error(`${what}: exited with ${code} first; stderr: ${stderr.join('')}`)));
    }),
    what,
    30_000,
  );
}

/** Runs to completion; resolves with the exit code and the output. */
export function runToEnd(child: ChildProcess, what: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return within(new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr }))), `${what} to exit by itself`, 30_000);
}
