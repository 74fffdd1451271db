/**
 * SQLite store (better-sqlite3): sessions and their logs in one file, so a restarted
 * process finds its sessions and can prove continuity across the restart.
 *
 * One connection per store, WAL journal. Each method is one statement or one
 * `BEGIN IMMEDIATE` transaction: an append (a whole batch) and the retention it triggers
 * commit together or not at all, so after a crash every stream is still exactly
 * `firstSeq..lastSeq` with its chain intact. Appends made in one synchronous stretch share
 * one transaction (group commit, `./append.ts`). Schema and migrations:
 * `./schema.ts`.
 *
 * Page size: SQLite's default (4096), set on new files only (a file's page size is fixed
 * when it is created, and in WAL mode it cannot change). Larger pages were measured and
 * did not pay: a batch's payloads go to overflow pages whatever their size, larger pages
 * make every small commit write more, and what large payloads cost is bytes through the
 * WAL and the checkpoint, not pages. Existing files keep theirs; no migration involved.
 */
import { realpathSync } from 'node:fs';
import { isSqliteError, openDatabase } from './driver.js';
import { ContinuityError, isContinuityError } from '../../protocol/errors.js';
import { LocalBus, LocalOwnership } from '../local-cluster.js';
import { resolveRetention } from '../rules.js';
import { Appender } from './append.js';
import { SqliteBudget } from './budget.js';
import { BACKSTOP_PAGES, Checkpointer, DEFAULT_PAGES } from './checkpoint.js';
import { unpackBatch } from './batches.js';
import { ProcessLock } from './lock.js';
import { PROCESS_LOCK_VERSION, SCHEMA_VERSION, checkSchema, migrate } from './schema.js';
import { toHead, toRecord } from './rows.js';
import { Connection, type Db } from './statements.js';
import type { EventLog, LogEvent, ResolvedRetention, RetentionOptions, SessionRecord, SessionStore, Store, StreamHead, StreamInfo } from '../types.js';

/**
 * Schema version this build writes. A value, not a re-export, so the published types of this
 * subpath never reach the internal modules that name better-sqlite3's types.
 */
export const SQLITE_SCHEMA_VERSION: number = SCHEMA_VERSION;

/** Options of {@link sqliteStore}. */
export interface SqliteStoreOptions {
  /** Database file (created if missing), or `':memory:'` for a private, non-durable database. */
  path: string;
  /** Per-stream retention; applied inside each append's transaction. */
  retention?: RetentionOptions | undefined;
  /**
   * What a committed append survives (`PRAGMA synchronous`, with the WAL journal):
   *
   * - `'normal'` (default): survives a crash of the process (kill -9, OOM kill, panic):
   *   every append that resolved is on disk when the file is reopened. An OS crash or a
   *   power loss may lose the last transactions (those not yet checkpointed to disk);
   *   the file stays consistent, and each stream is still contiguous up to an earlier
   *   head. No fsync per commit; WAL checkpoints fsync in the background of commits.
   * - `'full'`: also survives an OS crash or power loss: every commit fsyncs the WAL
   *   before the append resolves. Costs one fsync per append call (per batch, never per
   *   event).
   *
   * A log that lost its tail is detected, not hidden: clients whose cursor is ahead of the
   * head get `cursor-ahead`.
   */
  durability?: 'normal' | 'full' | undefined;
  /** Clock for age-based retention (tests); default `Date.now`. */
  now?: (() => number) | undefined;
  /**
   * Payload bytes (UTF-8) all streams may hold together (default 4 GiB). Past it the oldest
   * batches in the store are trimmed first, whichever stream holds them: many sessions, or
   * one client calling a tool with large answers again and again, cannot grow the file
   * past it.
   */
  maxTotalBytes?: number | undefined;
}

/** Default of {@link SqliteStoreOptions.maxTotalBytes}. */
export const DEFAULT_SQLITE_MAX_TOTAL_BYTES = 4 * 1024 * 1024 * 1024;

/** Diagnostic view of an open SQLite store; see {@link sqliteStoreInfo}. */
export interface SqliteStoreInfo {
  readonly path: string;
  /** `'wal'` for files; `'memory'` for `':memory:'`. */
  readonly journalMode: string;
  /** The connection's `PRAGMA synchronous`. */
  readonly synchronous: 'off' | 'normal' | 'full' | 'extra';
  /** `PRAGMA user_version` of the file. */
  readonly schemaVersion: number;
  readonly busyTimeoutMs: number;
}

/** Wait this long for another connection's write lock before failing with `store-unavailable`. */
const BUSY_TIMEOUT_MS = 5_000;
/** Page size of new files (see the header: larger pages did not pay). */
const PAGE_SIZE = 4096;
/** Truncate the WAL back to this size after a checkpoint, so a burst does not leave a huge file. */
const WAL_SIZE_LIMIT = 64 * 1024 * 1024;

class SqliteEventLog implements EventLog {
  readonly #c: Connection;
  readonly #owners: LocalOwnership;
  readonly #bus: LocalBus;
  readonly #appender: Appender;
  readonly #drop: (session: string, stream: string) => void;
  readonly #dropSession: (session: string) => void;

  constructor(
    c: Connection,
    retention: ResolvedRetention,
    now: () => number,
    owners: LocalOwnership,
    bus: LocalBus,
    checkpointer: Checkpointer | undefined,
    budget: SqliteBudget,
  ) {
    this.#c = c;
    this.#owners = owners;
    this.#bus = bus;
    this.#appender = new Appender(c, retention, now, owners, bus, budget);
    if (checkpointer) {
      this.#appender.onCommit = (bytes) => checkpointer.wrote(bytes);
      this.#appender.holdOff = () => checkpointer.holding;
    }
    c.beforeUse = () => this.#appender.flush();
    const immediate = <A extends unknown[]>(fn: (...args: A) => void) => {
      const tx = c.db.transaction(fn);
      return (...args: A) => tx.immediate(...args);
    };
    this.#drop = immediate((session: string, stream: string) => {
      c.st.deleteStreamBatches.run(session, stream);
      c.st.deleteStream.run(session, stream);
      budget.dropped();
    });
    this.#dropSession = immediate((session: string) => {
      c.st.deleteSessionBatches.run(session);
      c.st.deleteSessionStreams.run(session);
      budget.dropped();
    });
  }

  async openStream(session: string, stream: string, seed: string, info: StreamInfo, fence?: number): Promise<void> {
    this.#owners.check(session, fence);
    this.#c.use((st) => {
      try {
        st.insertStream.run(session, stream, session, info.kind, JSON.stringify(info.requestIds), seed, seed);
      } catch (err) {
        if (isDuplicateKey(err)) throw new ContinuityError('store-conflict', `Stream ${stream} already exists`);
        throw err;
      }
    });
  }

  /** Committed with the other appends of this synchronous stretch: see `./append.ts`. */
  async append(session: string, stream: string, events: readonly LogEvent[], fence?: number): Promise<void> {
    return this.#appender.append(session, stream, events, fence);
  }

  async read(session: string, stream: string, afterSeq: number, limit: number): Promise<LogEvent[]> {
    const n = sqlLimit(limit);
    if (n === 0) return [];
    return this.#c.use((st) => {
      // A row may be partly trimmed: events below the stream's low watermark are skipped.
      const firstSeq = st.getFirstSeq.get(session, stream);
      if (firstSeq === undefined) return [];
      const from = Math.max(afterSeq + 1, firstSeq);
      const out: LogEvent[] = [];
      const max = n < 0 ? Infinity : n;
      for (const row of st.readBatches.iterate(session, stream, from)) {
        unpackBatch(row, from, max, out);
        if (out.length >= max) break;
      }
      return out;
    });
  }

  async head(session: string, stream: string): Promise<StreamHead | undefined> {
    const row = this.#c.use((st) => st.getStream.get(session, stream));
    return row && toHead(row);
  }

  async closeStream(session: string, stream: string, fence?: number): Promise<void> {
    this.#owners.check(session, fence);
    const { changes } = this.#c.use((st) => st.closeStream.run(session, stream));
    if (changes > 0) {
      const head = await this.head(session, stream);
      if (head) this.#bus.notifyClose(session, stream, head.lastSeq);
    }
  }

  async streams(session: string): Promise<string[]> {
    return this.#c.use((st) => st.listStreams.all(session));
  }

  async dropStream(session: string, stream: string): Promise<void> {
    this.#c.use(() => this.#drop(session, stream));
  }

  async dropSession(session: string): Promise<void> {
    this.#c.use(() => this.#dropSession(session));
  }
}

class SqliteSessionStore implements SessionStore {
  readonly #c: Connection;
  readonly #owners: LocalOwnership;

  constructor(c: Connection, owners: LocalOwnership) {
    this.#c = c;
    this.#owners = owners;
  }

  async create(record: SessionRecord): Promise<void> {
    this.#c.use((st) => {
      try {
        st.insertSession.run(record.id, ...sessionColumns(record));
      } catch (err) {
        if (isDuplicateKey(err)) throw new ContinuityError('store-conflict', 'Session id already exists');
        throw err;
      }
    });
  }

  async get(id: string): Promise<SessionRecord | undefined> {
    const row = this.#c.use((st) => st.getSession.get(id));
    return row && toRecord(row);
  }

  async put(record: SessionRecord, fence?: number): Promise<void> {
    this.#owners.check(record.id, fence);
    this.#c.use((st) => st.updateSession.run(...sessionColumns(record), record.id));
  }

  async delete(id: string): Promise<void> {
    this.#c.use((st) => st.deleteSession.run(id));
    this.#owners.forget(id);
  }

  async count(): Promise<number> {
    return this.#c.use((st) => st.countSessions.get() ?? 0);
  }

  async idleSince(cutoff: number, limit: number): Promise<string[]> {
    const n = sqlLimit(limit);
    if (n === 0) return [];
    return this.#c.use((st) => st.idleSessions.all(cutoff, n));
  }
}

function isDuplicateKey(err: unknown): boolean {
  return isSqliteError(err) && (err.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || err.code === 'SQLITE_CONSTRAINT_UNIQUE');
}

/** A JS `limit` as SQL `LIMIT`: 0 for "nothing", -1 for "no limit" (SQLite treats any negative as that). */
function sqlLimit(limit: number): number {
  if (!(limit > 0)) return 0;
  return limit >= Number.MAX_SAFE_INTEGER ? -1 : Math.floor(limit);
}

function validate(options: SqliteStoreOptions): void {
  if (typeof options !== 'object' || options === null) throw new TypeError('sqliteStore: options must be an object with a path');
  if (typeof options.path !== 'string' || options.path === '') {
    throw new TypeError(`sqliteStore: path must be a file path or ':memory:', got ${JSON.stringify(options.path)}`);
  }
  const d = options.durability;
  if (d !== undefined && d !== 'normal' && d !== 'full') {
    throw new RangeError(`sqliteStore: durability must be 'normal' or 'full', got ${JSON.stringify(d) ?? String(d)}`);
  }
  if (options.now !== undefined && typeof options.now !== 'function') throw new TypeError('sqliteStore: now must be a function');
  const max = options.maxTotalBytes;
  if (max !== undefined && !(typeof max === 'number' && max > 0)) {
    throw new RangeError(`sqliteStore: maxTotalBytes must be a positive number of bytes, got ${String(max)}`);
  }
}

const SYNCHRONOUS = ['off', 'normal', 'full', 'extra'] as const;
const connections = new WeakMap<Store, { db: Db; path: string }>();

/** Bun or Deno, where better-sqlite3 (a Node addon built on nan) cannot load; undefined on Node. */
function otherRuntime(): string | undefined {
  if ('Bun' in globalThis) return 'Bun';
  if ('Deno' in globalThis) return 'Deno';
  return undefined;
}

/**
 * A store in a SQLite file: durable across process restarts (and, with
 * `durability: 'full'`, across power loss). Opening creates the file and its schema, or
 * migrates an older schema; a file of a newer schema, or not ours, is refused.
 *
 * @example
 * ```ts
 * import { sqliteStore } from 'mcp-continuity/stores/sqlite';
 * const store = sqliteStore({ path: './mcp.db', retention: { maxEvents: 1000 } });
 * // … createEndpoint({ store, … }); on shutdown:
 * await store.close();
 * ```
 *
 * A file serves one process at a time: a second process opening it (node's cluster module,
 * PM2) is refused with `store-locked`, naming the process that holds it; a holder that
 * died (kill -9) does not block a restart. Several processes share sessions on the Redis
 * store instead (`mcp-continuity/stores/redis`).
 *
 * @throws TypeError / RangeError for bad options (before the file is touched); Error when
 *   the file cannot be opened, is not an mcp-continuity store, or has a newer schema;
 *   `ContinuityError` `store-locked` when another live process has the file open.
 */
export function sqliteStore(options: SqliteStoreOptions): Store {
  validate(options);
  const retention = resolveRetention(options.retention);
  const now = options.now ?? Date.now;
  const { path } = options;
  const memory = path === ':memory:';
  let db: Db;
  try {
    db = openDatabase(path, { timeout: BUSY_TIMEOUT_MS });
  } catch (err) {
    const runtime = otherRuntime();
    // There the driver itself cannot load: the path is not what is wrong.
    if (runtime !== undefined)
      throw new ContinuityError(
        'store-open-failed',
        `sqliteStore: better-sqlite3 does not load on ${runtime} (${(err as Error).message.split('\n')[0]}); on ${runtime} use memoryStore or redisStore, or serve from Node for SQLite`,
        undefined,
        { cause: err },
      );
    // A missing better-sqlite3 is not about this path: its one line says how to install it.
    if (isContinuityError(err, 'dependency-missing')) throw err;
    throw new ContinuityError('store-open-failed', `sqliteStore: cannot open ${path}: ${(err as Error).message}`, undefined, { cause: err });
  }
  let c: Connection;
  let lock: ProcessLock | undefined;
  let checkpointer: Checkpointer | undefined;
  try {
    const version = checkSchema(db); // before writing anything, even the journal mode, to a file we may refuse
    // Page size is fixed when the first page is written (the journal mode writes it): only a new file gets ours.
    if (version === 0) db.pragma(`page_size = ${PAGE_SIZE}`);
    if (!memory) {
      const mode = db.pragma('journal_mode = WAL', { simple: true });
      if (mode !== 'wal') throw new ContinuityError('store-open-failed', `could not switch to WAL journal mode (got ${String(mode)})`);
      db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT}`);
    }
    db.pragma(`synchronous = ${options.durability === 'full' ? 'FULL' : 'NORMAL'}`);
    // One process per file: a second one refuses to start (store-locked), naming the holder.
    // A file that has the lock table is claimed before it is migrated, so an upgrade never
    // changes the layout under a process (of an older build) that still uses the file.
    if (!memory && version >= PROCESS_LOCK_VERSION) lock = ProcessLock.acquire(db, path);
    migrate(db);
    if (!memory && !lock) lock = ProcessLock.acquire(db, path);
    c = new Connection(db, lock);
    if (!memory) {
      // Checkpoints run on a worker thread; the connection's own auto-checkpoint is the backstop.
      db.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
      checkpointer = new Checkpointer(realpathSync(path), () => {
        if (db.open) db.pragma(`wal_autocheckpoint = ${DEFAULT_PAGES}`);
      });
    }
  } catch (err) {
    lock?.release();
    db.close();
    // Refusals of the file itself keep their code and are prefixed like any other failure to open.
    const code = err instanceof ContinuityError ? err.code : 'store-open-failed';
    if (code !== 'store-open-failed' && code !== 'store-foreign') throw err;
    const message = (err as Error).message;
    const text = message.startsWith(path) ? `sqliteStore: ${message}` : `sqliteStore: cannot open ${path}: ${message}`;
    throw new ContinuityError(code, text, undefined, { cause: err });
  }
  const ownership = new LocalOwnership(now);
  const bus = new LocalBus();
  const store: Store = {
    name: 'sqlite',
    durable: !memory,
    shared: false,
    sessions: new SqliteSessionStore(c, ownership),
    log: new SqliteEventLog(c, retention, now, ownership, bus, checkpointer, new SqliteBudget(options.maxTotalBytes ?? DEFAULT_SQLITE_MAX_TOTAL_BYTES)),
    ownership,
    bus,
    async close() {
      if (db.open) c.beforeUse?.(); // what was appended before close is committed
      await checkpointer?.close();
      c.lock?.release();
      if (db.open) db.close();
    },
  };
  connections.set(store, { db, path });
  return store;
}

/**
 * Reads back the live settings of a store made by {@link sqliteStore} (for diagnostics and
 * tests); `undefined` for any other store. Throws `store-unavailable` once it is closed.
 */
export function sqliteStoreInfo(store: Store): SqliteStoreInfo | undefined {
  const entry = connections.get(store);
  if (!entry) return undefined;
  const { db, path } = entry;
  if (!db.open) throw new ContinuityError('store-unavailable', 'SQLite store is closed');
  const sync = db.pragma('synchronous', { simple: true }) as number;
  return {
    path,
    journalMode: db.pragma('journal_mode', { simple: true }) as string,
    synchronous: SYNCHRONOUS[sync] ?? 'off',
    schemaVersion: db.pragma('user_version', { simple: true }) as number,
    busyTimeoutMs: db.pragma('busy_timeout', { simple: true }) as number,
  };
}

/** A session's columns after its id, in the order both the insert and the update take them. */
function sessionColumns(record: SessionRecord): [string, string, string, string, string | null, number, number, string | null] {
  return [
    record.epoch,
    JSON.stringify(record.pastEpochs),
    record.protocolVersion,
    record.initialize,
    record.principal ?? null,
    record.createdAt,
    record.lastActiveAt,
    record.state ?? null,
  ];
}
