/** The official `@modelcontextprotocol/server-everything` in streamable HTTP mode, as a child process. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { freePort } from '../helpers/processes.js';

const require = createRequire(import.meta.url);
const entry = join(dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'index.js');

export interface Everything {
  child: ChildProcess;
  url: URL;
  port: number;
  kill(): Promise<void>;
}

/** Starts it on `port` (a free one by default) and waits until it listens. */
export async function startEverything(port?: number): Promise<Everything> {
  const p = port ?? (await freePort());
  const child = spawn(process.execPath, [entry, 'streamableHttp'], { env: { ...process.env, PORT: String(p) }, stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    const lines = createInterface({ input: child.stderr as NodeJS.ReadableStream });
    lines.on('line', (line) => {
      if (/listening on port/i.test(line)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`server-everything exited with ${code} before listening`)));
  });
  const kill = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await gone;
  };
  return { child, url: new URL(`http://127.0.0.1:${p}/mcp`), port: p, kill };
}
