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
  /** Why it is not alive, when nothing asked it to stop (a crash): its exit and its stderr. */
  readonly crash: string | undefined;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** Fails naming every replica that exited without being asked to (no input may end one). */
export function assertNoCrash(replicas: readonly Replica[]): void {
  const crashed = replicas.map((r) => r.crash).filter((c) => c !== undefined);
  if (crashed.length > 0) throw new Error(`${crashed.length} replica(s) exited on their own:\n${crashed.join('\n')}`);
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
  let stopping = false;
  let crash: string | undefined;
  child.once('exit', (code, signal) => {
    // A clean exit (0, after a SIGTERM some test sent itself) or a test's own kill is no crash.
    const crashed = (code !== null && code !== 0) || (signal !== null && signal !== 'SIGKILL' && signal !== 'SIGTERM');
    if (!stopping && crashed) {
      crash = `replica ${url.href} (pid ${child.pid}) exited with ${code ?? signal}: ${stderr.slice(-20).join('\n')}`;
      // Said at once: a test still waiting on this replica may never get to its own check.
      console.error(`# ${crash}`);
    } else if (process.env.DEBUG_REPLICAS) console.error(`# replica ${child.pid} exited ${code} ${signal}\n${stderr.join('\n')}`);
  });
  const url = new URL(line.trim());
  return {
    child,
    url,
    stderr,
    get crash() {
      return crash;
    },
    get alive() {
      return child.exitCode === null && child.signalCode === null;
    },
    async kill(signal = 'SIGKILL') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      stopping = true;
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      if (signal === 'SIGKILL') child.kill('SIGCONT');
      child.kill(signal);
      await gone;
    },
  };
}
