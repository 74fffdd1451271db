/**
 * One process per SQLite file. SQLite has no channel between processes to push appends or
 * carry requests to a session's owner, so a second process on the same file could only
 * poll, or (as it did) silently end the first one's sessions. It refuses to start instead,
 * in one line naming the file, the process holding it and the fix (Redis, for several
 * processes).
 *
 * The claim is a row of `process_lock` (pid, host, pid namespace, boot id, a nonce, and a
 * heartbeat every few seconds), taken in a `BEGIN IMMEDIATE` transaction so two processes
 * starting together cannot both win. A holder that died does not block a restart: its row
 * is taken over when its pid is gone on this host (same pid namespace), when the host has
 * rebooted since, or when its heartbeat is stale (a holder on another host, or a reused
 * pid). The same process may reopen the file once it closed it.
 */
import { readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type BetterSqlite3 from 'better-sqlite3';
import { ContinuityError } from '../../protocol/errors.js';

/** How often the holder refreshes its heartbeat. */
export const HEARTBEAT_MS = 5_000;
/** A heartbeat older than this means the holder is gone (only relevant across hosts or namespaces). */
export const STALE_MS = 30_000;

interface LockRow {
  pid: number;
  host: string;
  pid_ns: string;
  boot_id: string;
  nonce: string;
  started_at: number;
  heartbeat_at: number;
}

/** Who this process is, as far as a lock row can tell. */
export interface ProcessIdentity {
  pid: number;
  host: string;
  /** The pid namespace (Linux containers): pids only compare within one. */
  pidNs: string;
  /** Changes on every boot: a row from an earlier boot is dead. */
  bootId: string;
}

function readOr(read: () => string, fallback: string): string {
  try {
    return read().trim();
  } catch {
    return fallback;
  }
}

export function thisProcess(): ProcessIdentity {
  return {
    pid: process.pid,
    host: hostname(),
    pidNs: readOr(() => readlinkSync('/proc/self/ns/pid'), ''),
    bootId: readOr(() => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8'), ''),
  };
}

/** Is `pid` a live process here? EPERM means it exists but belongs to someone else. */
function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Nonces of the locks this process holds or held, by file: "ours" is decided by nonce, never by pid alone. */
const held = new Map<string, string>();
const issued = new Set<string>();

/** Why the holder of `row` no longer counts, or `undefined` if it still does. */
function goneBecause(row: LockRow, me: ProcessIdentity, now: number): string | undefined {
  if (issued.has(row.nonce)) return 'an earlier store of this process';
  const sameMachine = row.host === me.host && row.pid_ns === me.pidNs;
  if (sameMachine && row.boot_id !== me.bootId && me.bootId !== '') return 'the host rebooted';
  if (sameMachine && !pidAlive(row.pid)) return 'its process is gone';
  if (now - row.heartbeat_at > STALE_MS) return 'its heartbeat is stale';
  return undefined;
}

/** The single-process claim of one open SQLite store. */
export class ProcessLock {
  readonly #db: BetterSqlite3.Database;
  readonly #key: string;
  readonly #nonce: string;
  readonly #now: () => number;
  readonly #timer: ReturnType<typeof setInterval>;
  #lost = false;

  private constructor(db: BetterSqlite3.Database, key: string, nonce: string, now: () => number) {
    this.#db = db;
    this.#key = key;
    this.#nonce = nonce;
    this.#now = now;
    this.#timer = setInterval(() => this.heartbeat(), HEARTBEAT_MS);
    this.#timer.unref();
  }

  /**
   * Claims `db` (the file at `path`) for this process, or throws `store-locked` naming the
   * holder. Call after the schema is migrated.
   */
  static acquire(db: BetterSqlite3.Database, path: string, now: () => number = Date.now, me: ProcessIdentity = thisProcess()): ProcessLock {
    const key = realpathSync(path);
    if (held.has(key)) {
      throw new ContinuityError(
        'store-locked',
        `SQLite store ${path} is already open in this process (pid ${me.pid}): close that store first, or share one store object.`,
        { path, pid: me.pid },
      );
    }
    const nonce = randomBytes(12).toString('hex');
    const claim = db.transaction(() => {
      const row = db.prepare<[], LockRow>('SELECT * FROM process_lock WHERE id = 1').get();
      const t = now();
      if (row && goneBecause(row, me, t) === undefined) {
        const age = Math.max(0, Math.round((t - row.heartbeat_at) / 1000));
        throw new ContinuityError(
          'store-locked',
          `SQLite store ${path} is in use by process ${row.pid} on ${row.host} (heartbeat ${age} s ago); a SQLite file serves one process: stop that process, or run several processes on the Redis store (mcp-continuity/stores/redis).`,
          { path, pid: row.pid, host: row.host },
        );
      }
      db.prepare(
        `INSERT OR REPLACE INTO process_lock (id, pid, host, pid_ns, boot_id, nonce, started_at, heartbeat_at)
         VALUES (1, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(me.pid, me.host, me.pidNs, me.bootId, nonce, t, t);
    });
    claim.immediate();
    held.set(key, nonce);
    issued.add(nonce);
    return new ProcessLock(db, key, nonce, now);
  }

  /** Another process took the file over (our heartbeat was stale): this store must not write. */
  get lost(): boolean {
    return this.#lost;
  }

  /** Refreshes the heartbeat; notices a takeover. */
  heartbeat(): void {
    if (this.#lost || !this.#db.open) return;
    try {
      const { changes } = this.#db.prepare('UPDATE process_lock SET heartbeat_at = ? WHERE id = 1 AND nonce = ?').run(this.#now(), this.#nonce);
      if (changes === 0) this.#lost = true;
    } catch {
      // Busy or failing disk: the next heartbeat tries again; writes report their own errors.
    }
  }

  /** Throws `store-locked` once the file was taken over by another process. */
  check(): void {
    if (this.#lost) {
      throw new ContinuityError('store-locked', 'Another process took this SQLite store over (this process stalled past its heartbeat); restart this process.');
    }
  }

  /** Gives the file up (before the database closes). */
  release(): void {
    clearInterval(this.#timer);
    if (held.get(this.#key) === this.#nonce) held.delete(this.#key);
    if (this.#lost || !this.#db.open) return;
    try {
      this.#db.prepare('DELETE FROM process_lock WHERE id = 1 AND nonce = ?').run(this.#nonce);
    } catch {
      // The row stays; the next opener sees this process gone (or it is us: the nonce is ours).
    }
  }
}
