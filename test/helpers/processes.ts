/** Child server processes that tests start, kill -9 and restart. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('./child-server.ts', import.meta.url));

/** A port that was free a moment ago. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface ChildServer {
  child: ChildProcess;
  url: URL;
  /** When it printed ready (ms). */
  readyAt: number;
}

export async function startChild(port: number, store: string, retryMs = 100): Promise<ChildServer> {
  const child = spawn(process.execPath, ['--import', 'tsx', script, String(port), store, String(retryMs)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`child server exited with ${code} before it was ready`)));
  });
  const url = line.replace(/^ready /, '');
  return { child, url: new URL(url), readyAt: Date.now() };
}

/** kill -9, and wait until the process is gone. */
export async function kill9(server: ChildServer): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  const gone = new Promise<void>((resolve) => server.child.once('exit', () => resolve()));
  server.child.kill('SIGKILL');
  await gone;
}
