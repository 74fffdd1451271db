/**
 * Checks `serve` makes before it creates anything: a busy port or an unusable SQLite path
 * becomes one line naming the problem and the fix, and no database file is left behind.
 */
import { constants, accessSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, resolve } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { betterSqlite3, openDatabase } from '../store/sqlite/driver.js';
import { isContinuityError } from '../protocol/errors.js';
import { StartupError } from './usage.js';

/**
 * Every check `serve` can make before it loads the server side: its port, the `--metrics`
 * port, and an SQLite path. Run first, they fail in well under a second.
 */
export async function preflight(options: { port: number; host: string; store: string; metricsAt: { host: string; port: number } | undefined }): Promise<void> {
  await ensurePortFree(options.port, options.host);
  if (options.metricsAt)
    await ensurePortFree(options.metricsAt.port, options.metricsAt.host).catch((error: unknown) => {
      throw new StartupError(`--metrics: ${(error as Error).message.replace(/--port|--host/g, '--metrics')}`);
    });
  if (options.store.startsWith('sqlite:') && options.store !== 'sqlite:') checkSqlitePath(options.store.slice('sqlite:'.length));
}

/** Fails with a `StartupError` if `port` on `host` cannot be bound (port 0 checks the host: it must be this machine's). */
export async function ensurePortFree(port: number, host: string): Promise<void> {
  const server = createServer();
  await new Promise<void>((done, fail) => {
    server.once('error', (error: NodeJS.ErrnoException) => fail(listenError(error, host, port)));
    server.listen(port, host, () => server.close(() => done()));
  });
}

/** A failed listen as one line naming the fix. */
export function listenError(error: NodeJS.ErrnoException, host: string, port: number): StartupError {
  switch (error.code) {
    case 'EADDRINUSE':
      return new StartupError(`port ${port} on ${host} is already in use: stop what holds it, or pick another with --port (0 picks a free one)`);
    case 'EACCES':
      return new StartupError(`no permission to listen on port ${port}: use a port above 1023 with --port`);
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new StartupError(`cannot bind ${host}: it is not an address of this machine; fix --host`);
    default:
      return new StartupError(`cannot listen on ${host}:${port}: ${error.message}`);
  }
}

/**
 * Fails with a `StartupError` unless `path` can hold a writable SQLite database: its
 * directory exists and is writable (SQLite adds `-wal` and `-shm` files beside it), and an
 * existing file is a database this process may write.
 */
export function checkSqlitePath(path: string): void {
  const fix = 'pass another path with --store sqlite:PATH, or --store memory';
  // serve's default store is SQLite: without better-sqlite3, say how to install it before anything else.
  try {
    betterSqlite3();
  } catch (error) {
    if (isContinuityError(error, 'dependency-missing')) throw new StartupError(error.message);
    throw error;
  }
  const full = resolve(path);
  const dir = dirname(full);
  const dirStat = statOrUndefined(dir);
  if (!dirStat) throw new StartupError(`SQLite store ${path}: directory ${dir} does not exist; create it, or ${fix}`);
  if (!dirStat.isDirectory()) throw new StartupError(`SQLite store ${path}: ${dir} is not a directory; ${fix}`);
  const stat = statOrUndefined(full);
  if (stat?.isDirectory()) throw new StartupError(`SQLite store ${path} is a directory, not a database file; ${fix}`);
  if (!writable(dir)) throw new StartupError(`SQLite store ${path}: directory ${dir} is not writable; fix its permissions, or ${fix}`);
  if (!stat) return; // created on open
  if (!writable(full)) throw new StartupError(`SQLite store ${path} is read-only; make it writable, or ${fix}`);
  let db: BetterSqlite3.Database | undefined;
  try {
    db = openDatabase(full, { fileMustExist: true });
    const current = db.pragma('user_version', { simple: true }) as number;
    // Writing the value it already has changes nothing, but fails on a file SQLite opened read-only
    // (permissions a superuser's access() check does not see, a read-only mount).
    db.pragma(`user_version = ${Number(current)}`);
  } catch (error) {
    if (isContinuityError(error, 'dependency-missing')) throw new StartupError(error.message);
    const code = (error as { code?: unknown }).code;
    if (code === 'SQLITE_NOTADB') throw new StartupError(`SQLite store ${path} exists but is not an SQLite database; ${fix}`);
    if (code === 'SQLITE_READONLY' || code === 'SQLITE_CANTOPEN') throw new StartupError(`SQLite store ${path} is read-only; make it writable, or ${fix}`);
    throw new StartupError(`SQLite store ${path} cannot be opened (${(error as Error).message}); ${fix}`);
  } finally {
    db?.close();
  }
}

function statOrUndefined(path: string): ReturnType<typeof statSync> | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

function writable(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}
