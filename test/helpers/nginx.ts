/**
 * A real nginx (Debian's package) in front of replicas: a generated nginx.conf in a temp dir,
 * run in the foreground as a child process on an ephemeral port, its pid and error log in
 * that dir. Without nginx: a loud skip locally, a failure under `CI=true` (`.ci/run` installs it).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './processes.js';
import { waitFor } from './wait.js';

const NGINX = ['/usr/sbin/nginx', 'nginx'].find((bin) => spawnSync(bin, ['-v']).status === 0);

/** Whether nginx tests can run: a loud skip locally, a failure in CI. */
export function nginxOrSkip(what: string): boolean {
  if (NGINX !== undefined) return true;
  const message = `nginx is not installed: ${what} cannot run. Install it with: apt-get install -y nginx-light`;
  if (process.env.CI === 'true') throw new Error(message);
  console.warn(`\n*** SKIPPED: ${message}\n`);
  return false;
}

export interface Nginx {
  readonly port: number;
  readonly url: (path: string) => URL;
  /** The error log so far (for failure messages). */
  errorLog(): string;
  /**
   * Rewrites the configuration with `http` and reloads it (SIGHUP): resolves once a worker
   * on the new configuration runs. Old workers finish the requests they hold, streams
   * included, as in a production reload.
   */
  reload(http: string): Promise<void>;
  stop(): Promise<void>;
}

/** The pids of a process's children (Linux). */
function childrenOf(pid: number): Set<string> {
  try {
    return new Set(readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean));
  } catch {
    return new Set();
  }
}

/**
 * Starts nginx with `http` (the body of the `http { }` block, with `LISTEN` standing for
 * `127.0.0.1:port`) on `port` (default: a free one) and waits until it accepts connections.
 */
export async function startNginx(http: string, port?: number): Promise<Nginx> {
  if (NGINX === undefined) throw new Error('nginx is not installed');
  port ??= await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'mcpc-nginx-'));
  const conf = join(dir, 'nginx.conf');
  const write = (body: string): void =>
    writeFileSync(
      conf,
      [
        `pid ${join(dir, 'nginx.pid')};`,
        `error_log ${join(dir, 'error.log')} warn;`,
        'worker_processes 1;',
        'events { worker_connections 1024; }',
        'http {',
        `  access_log off;`,
        // Every temp path inside the dir: the package's defaults need root.
        ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((k) => `  ${k}_temp_path ${join(dir, k)};`),
        body.replaceAll('LISTEN', `127.0.0.1:${port}`),
        '}',
      ].join('\n'),
    );
  write(http);
  const child: ChildProcess = spawn(NGINX, ['-p', dir, '-c', conf, '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const errorLog = (): string => {
    try {
      return readFileSync(join(dir, 'error.log'), 'utf8') + stderr;
    } catch {
      return stderr;
    }
  };
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      // SIGTERM: the master stops its workers first (after SIGKILL they would keep the port).
      child.kill('SIGTERM');
      await gone;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(async () => {
      if (child.exitCode !== null) throw new Error(`nginx exited with ${child.exitCode}: ${errorLog()}`);
      return accepts(port);
    }, `nginx on port ${port} to accept connections`);
  } catch (error) {
    await stop();
    throw error;
  }
  const reload = async (body: string): Promise<void> => {
    const pid = child.pid as number;
    const before = childrenOf(pid);
    write(body);
    child.kill('SIGHUP');
    await waitFor(() => {
      if (child.exitCode !== null) throw new Error(`nginx exited on reload: ${errorLog()}`);
      return [...childrenOf(pid)].some((p) => !before.has(p));
    }, 'nginx to start a worker on the new configuration');
  };
  return { port, url: (path) => new URL(`http://127.0.0.1:${port}${path}`), errorLog, reload, stop };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * The fenced block of `lang` in a markdown file that follows the line containing `marker`:
 * the recipes in the docs are the configurations the tests run.
 */
export function recipe(markdown: string, marker: string, lang: string): string {
  const at = markdown.indexOf(marker);
  if (at < 0) throw new Error(`no ${JSON.stringify(marker)} in the docs`);
  const start = markdown.indexOf('```' + lang + '\n', at);
  const end = markdown.indexOf('\n```', start + 1);
  if (start < 0 || end < 0) throw new Error(`no \`\`\`${lang} block after ${JSON.stringify(marker)}`);
  return markdown.slice(start + lang.length + 4, end);
}
