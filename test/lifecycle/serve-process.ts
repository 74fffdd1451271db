/**
 * One real `serve` replica, spawned from the build (dist/cli/main.js starts far faster than
 * through tsx, which matters at hundreds of replacements a run), with the tally file set.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { within } from '../helpers/wait.js';

const MAIN = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

export interface ServeSpec {
  store: string;
  tallyFile: string;
  /** Extra Host values the replica accepts (what nginx passes on). */
  allowedHosts?: string | undefined;
  drainMs: number;
}

export interface ServeProcess {
  readonly port: number;
  readonly url: URL;
  readonly pid: number;
  readonly alive: boolean;
  /** The last lines it wrote to stderr. */
  readonly stderr: string[];
  /** Sends `signal` (no wait). */
  signal(signal: NodeJS.Signals): void;
  /** Resolves when it has exited (at once if it has); fails after `timeoutMs`. */
  exited(timeoutMs: number): Promise<void>;
}

export async function startServe(port: number, spec: ServeSpec): Promise<ServeProcess> {
  const args = [MAIN, 'serve', '--port', String(port), '--store', spec.store, '--quiet', '--drain-ms', String(spec.drainMs)];
  if (spec.allowedHosts) args.push('--allowed-hosts', spec.allowedHosts);
  const child: ChildProcess = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, MCPC_TALLY_FILE: spec.tallyFile } });
  const stderr: string[] = [];
  createInterface({ input: child.stderr as NodeJS.ReadableStream }).on('line', (line) => {
    stderr.push(line);
    if (stderr.length > 40) stderr.shift();
  });
  // An interrupted run (Ctrl-C, a test timeout) must not leave replicas behind.
  const orphan = (): void => void child.kill('SIGKILL');
  process.once('exit', orphan);
  const exit = new Promise<void>((resolve) =>
    child.once('exit', () => {
      process.removeListener('exit', orphan);
      resolve();
    }),
  );
  const alive = (): boolean => child.exitCode === null && child.signalCode === null;
  try {
    const line = await within(
      new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout as NodeJS.ReadableStream }).once('line', resolve);
        void exit.then(() => reject(new Error(`serve on port ${port} exited before it was ready: ${stderr.join('\n')}`)));
      }),
      `serve on port ${port} to print its URL`,
      20_000,
    );
    return {
      port,
      url: new URL(line.trim()),
      pid: child.pid as number,
      stderr,
      get alive() {
        return alive();
      },
      signal(signal) {
        if (alive()) child.kill(signal);
      },
      exited: (timeoutMs) => within(exit, `serve ${child.pid} on port ${port} to exit`, timeoutMs),
    };
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
}
