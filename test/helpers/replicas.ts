/** Real `mcp-continuity serve` processes sharing one store: the replicas of cluster tests. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const cli = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

export interface Replica {
  readonly child: ChildProcess;
  readonly url: URL;
  /** What the process wrote to stderr (its reported errors). */
  readonly stderr: string[];
  readonly alive: boolean;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Starts `serve --store <store>` on a free port and waits for its URL. */
export async function startReplica(store: string, extra: readonly string[] = []): Promise<Replica> {
  const child = spawn(process.execPath, ['--import', 'tsx', cli, 'serve', '--port', '0', '--store', store, '--quiet', ...extra], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stderr: string[] = [];
  createInterface({ input: child.stderr as NodeJS.ReadableStream }).on('line', (line) => stderr.push(line));
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`serve exited with ${code} before it was ready: ${stderr.join('\n')}`)));
  });
  child.once('exit', (code, signal) => {
    if (process.env.DEBUG_REPLICAS) console.error(`# replica ${child.pid} exited ${code} ${signal}\n${stderr.join('\n')}`);
  });
  return {
    child,
    url: new URL(line.trim()),
    stderr,
    get alive() {
      return child.exitCode === null && child.signalCode === null;
    },
    async kill(signal = 'SIGKILL') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      if (signal === 'SIGKILL') child.kill('SIGCONT');
      child.kill(signal);
      await gone;
    },
  };
}
