/** Starting the fault-test server process, and reading its memory from /proc. */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('./server-process.ts', import.meta.url));

export interface ServerProcess {
  child: ChildProcess;
  url: URL;
  /** kill -9, and wait until it is gone. */
  kill(): Promise<void>;
}

export async function startServerProcess(spec: Record<string, unknown> = {}, nodeArgs: string[] = []): Promise<ServerProcess> {
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', script, JSON.stringify(spec)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`server process exited with ${code} before it was ready`)));
  });
  const kill = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await gone;
  };
  return { child, url: new URL(line.replace(/^ready /, '')), kill };
}

/** Current and peak resident set of a process, bytes (Linux /proc). */
export function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kb('VmRSS'), peak: kb('VmHWM') };
}

export const MiB = 1024 * 1024;
