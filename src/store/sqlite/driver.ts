/**
 * better-sqlite3, loaded when a SQLite store is first opened rather than when the package
 * is imported: it is an optional dependency (a native module, compiled or downloaded at
 * install), and users of the client, the memory or the Redis store never need it.
 *
 * Loaded with `require` (it is CommonJS) so that `sqliteStore()` stays synchronous.
 */
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import { ContinuityError } from '../../protocol/errors.js';

/** The one line that says how to get the SQLite store working. */
export const SQLITE_MISSING =
  'The SQLite store needs better-sqlite3 (an optional dependency), which is not installed: ' +
  'npm install better-sqlite3@12, or use another store (memory, or Redis: redis://HOST:PORT)';

let loaded: typeof BetterSqlite3 | undefined;

/** The better-sqlite3 module; throws `dependency-missing` naming the install command when it is absent. */
export function betterSqlite3(): typeof BetterSqlite3 {
  if (loaded) return loaded;
  try {
    loaded = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
  } catch (error) {
    if (isMissing(error)) throw new ContinuityError('dependency-missing', SQLITE_MISSING, undefined, { cause: error });
    throw error;
  }
  return loaded;
}

/**
 * Opens a database. The native addon loads on the first open: installed without its
 * binary (`--ignore-scripts`, a failed build) that fails here, with the same one line.
 */
export function openDatabase(path: string, options: BetterSqlite3.Options): BetterSqlite3.Database {
  const Database = betterSqlite3();
  try {
    return new Database(path, options);
  } catch (error) {
    if (/bindings file|better_sqlite3\.node/.test((error as Error).message)) {
      throw new ContinuityError('dependency-missing', `${SQLITE_MISSING} (its native part is missing: rebuild it with npm rebuild better-sqlite3)`, undefined, {
        cause: error,
      });
    }
    throw error;
  }
}

/** Is `error` better-sqlite3's SqliteError? (False when better-sqlite3 was never loaded.) */
export function isSqliteError(error: unknown): error is Error & { code: string } {
  return loaded !== undefined && error instanceof loaded.SqliteError;
}

function isMissing(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown };
  return e?.code === 'MODULE_NOT_FOUND' && typeof e.message === 'string' && e.message.includes("'better-sqlite3'");
}
