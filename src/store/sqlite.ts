/**
 * SQLite store (better-sqlite3): sessions and their logs in one file, so a restarted
 * process finds its sessions and can prove continuity across the restart.
 *
 * One connection per store, WAL journal. Each method is one statement or one
 * `BEGIN IMMEDIATE` transaction: an append (a whole batch) and the retention it triggers
 * commit together or not at all, so after a crash every stream is still exactly
 * `firstSeq..lastSeq` with its chain intact. Schema and migrations: `./sqlite-schema.ts`.
 */
import Database from 'better-sqlite3';
import { ContinuityError } from '../protocol/errors.js';
import { LocalBus, LocalOwnership } from './local-cluster.js';
import { checkContiguous, resolveRetention } from './rules.js';
import { ProcessLock } from './sqlite-lock.js';
import { SCHEMA_VERSION, checkSchema, migrate } from './sqlite-schema.js';
import { toHead, toRecord } from './sqlite-rows.js';
import { Connection, insertEvents, type Db } from './sqlite-statements.js';
import type {
  EventLog, LogEvent, ResolvedRetention, RetentionOptions, SessionRecord, SessionStore, Store, StreamHead, StreamInfo,
} from './types.js';

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
}

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
/** Truncate the WAL back to this size after a checkpoint, so a burst does not leave a huge file. */
const WAL_SIZE_LIMIT = 64 * 1024 * 1024;

class SqliteEventLog implements EventLog {
  readonly #c: Connection;
  readonly #retention: ResolvedRetention;
  readonly #now: () => number;
  readonly #owners: LocalOwnership;
  readonly #bus: LocalBus;
  readonly #append: (session: string, stream: string, events: readonly LogEvent[], fence: number | undefined) => void;
  readonly #drop: (session: string, stream: string) => void;
  readonly #dropSession: (session: string) => void;

  constructor(c: Connection, retention: ResolvedRetention, now: () => number, owners: LocalOwnership, bus: LocalBus) {
    this.#c = c;
    this.#retention = retention;
    this.#now = now;
    this.#owners = owners;
    this.#bus = bus;
    const immediate = <A extends unknown[]>(fn: (...args: A) => void) => {
      const tx = c.db.transaction(fn);
      return (...args: A) => tx.immediate(...args);
    };
    this.#append = immediate((session: string, stream: string, events: readonly LogEvent[], fence: number | undefined) => {
      // The lease table is this process's (the file is single-process), so checking it inside
      // the synchronous transaction makes the check and the write one step.
      this.#owners.check(session, fence);
      this.#appendTx(session, stream, events);
    });
    this.#drop = immediate((session: string, stream: string) => {
      c.st.deleteStreamEvents.run(session, stream);
      c.st.deleteStream.run(session, stream);
    });
    this.#dropSession = immediate((session: string) => {
      c.st.deleteSessionEvents.run(session);
      c.st.deleteSessionStreams.run(session);
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

  async append(session: string, stream: string, events: readonly LogEvent[], fence?: number): Promise<void> {
    this.#c.use(() => this.#append(session, stream, events, fence));
    const last = events[events.length - 1];
    if (last) this.#bus.notify(session, stream, last.seq, false);
  }

  async read(session: string, stream: string, afterSeq: number, limit: number): Promise<LogEvent[]> {
    const n = sqlLimit(limit);
    if (n === 0) return [];
    // Trimmed events are deleted in the transaction that moves firstSeq, so the range read
    // is clamped to the retained window by construction.
    return this.#c.use((st) => st.readEvents.all(session, stream, afterSeq, n));
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
      if (head) this.#bus.notify(session, stream, head.lastSeq, true);
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

  /** Runs inside `BEGIN IMMEDIATE`: any throw rolls back the whole batch. */
  #appendTx(session: string, stream: string, events: readonly LogEvent[]): void {
    const { st } = this.#c;
    const row = st.getStream.get(session, stream);
    if (!row) throw new ContinuityError('store-conflict', `Stream ${stream} does not exist`);
    const head = toHead(row);
    checkContiguous(head, events);
    let bytes = row.bytes + insertEvents(st, session, stream, events);
    const last = events[events.length - 1];
    if (last) {
      head.lastSeq = last.seq;
      head.lastChain = last.chain;
    }
    const oldFirst = head.firstSeq;
    bytes = this.#trim(session, stream, head, bytes);
    if (head.firstSeq > oldFirst) st.trimEvents.run(session, stream, oldFirst, head.firstSeq);
    if (last || head.firstSeq > oldFirst) {
      st.updateHead.run(head.firstSeq, head.baseChain, head.lastSeq, head.lastChain, bytes, session, stream);
    }
  }

  /**
   * Moves `head.firstSeq`/`head.baseChain` past the oldest events while the stream breaks a
   * retention limit (the rule of memory.ts: drop the oldest until count, bytes and the
   * oldest event's age all fit). Returns the retained byte total.
   */
  #trim(session: string, stream: string, head: StreamHead, bytes: number): number {
    const { maxEvents, maxBytes, maxAgeMs } = this.#retention;
    const aged = Number.isFinite(maxAgeMs);
    if (!aged && head.lastSeq - head.firstSeq + 1 <= maxEvents && bytes <= maxBytes) return bytes;
    if (head.lastSeq - head.firstSeq + 1 > maxEvents) {
      // The count limit alone fixes the first event to keep: cut there with one range sum
      // and one point read instead of walking the rows. Bytes and age may cut further below.
      const first = head.lastSeq - maxEvents + 1;
      const cut = this.#c.st.trimCut.get(session, stream, first, session, stream, head.firstSeq, first);
      if (cut && cut.chain !== null) {
        bytes -= cut.bytes;
        head.firstSeq = first;
        head.baseChain = cut.chain;
      }
      if (!aged && bytes <= maxBytes) return bytes;
    }
    const cutoff = aged ? this.#now() - maxAgeMs : -Infinity;
    for (const e of this.#c.st.scanOldest.iterate(session, stream, head.firstSeq)) {
      if (head.lastSeq - e.seq + 1 <= maxEvents && bytes <= maxBytes && e.at >= cutoff) break;
      bytes -= e.bytes;
      head.firstSeq = e.seq + 1;
      head.baseChain = e.chain;
    }
    return bytes;
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
        st.insertSession.run(record.id, record.epoch, JSON.stringify(record.pastEpochs), record.protocolVersion,
          record.initialize, record.principal ?? null, record.createdAt, record.lastActiveAt);
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
    this.#c.use((st) => st.updateSession.run(record.epoch, JSON.stringify(record.pastEpochs), record.protocolVersion,
      record.initialize, record.principal ?? null, record.createdAt, record.lastActiveAt, record.id));
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
  return err instanceof Database.SqliteError && (err.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || err.code === 'SQLITE_CONSTRAINT_UNIQUE');
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
}

const SYNCHRONOUS = ['off', 'normal', 'full', 'extra'] as const;
const connections = new WeakMap<Store, { db: Db; path: string }>();

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
    db = new Database(path, { timeout: BUSY_TIMEOUT_MS });
  } catch (err) {
    throw new Error(`sqliteStore: cannot open ${path}: ${(err as Error).message}`, { cause: err });
  }
  let c: Connection;
  try {
    checkSchema(db); // before writing anything, even the journal mode, to a file we may refuse
    if (!memory) {
      const mode = db.pragma('journal_mode = WAL', { simple: true });
      if (mode !== 'wal') throw new Error(`could not switch to WAL journal mode (got ${String(mode)})`);
      db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT}`);
    }
    db.pragma(`synchronous = ${options.durability === 'full' ? 'FULL' : 'NORMAL'}`);
    migrate(db);
    // One process per file: a second one refuses to start (store-locked), naming the holder.
    c = new Connection(db, memory ? undefined : ProcessLock.acquire(db, path));
  } catch (err) {
    db.close();
    if (err instanceof ContinuityError) throw err;
    const message = (err as Error).message;
    throw new Error(message.startsWith(path) ? `sqliteStore: ${message}` : `sqliteStore: cannot open ${path}: ${message}`, { cause: err });
  }
  const ownership = new LocalOwnership(now);
  const bus = new LocalBus();
  const store: Store = {
    name: 'sqlite',
    durable: !memory,
    shared: false,
    sessions: new SqliteSessionStore(c, ownership),
    log: new SqliteEventLog(c, retention, now, ownership, bus),
    ownership,
    bus,
    async close() {
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
