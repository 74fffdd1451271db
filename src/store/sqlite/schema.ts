/**
 * Schema of the SQLite store, and how a file is brought up to it.
 *
 * Versioning: the schema version lives in the file header (`PRAGMA user_version`), and
 * `PRAGMA application_id` marks the file as ours. {@link MIGRATIONS} is an ordered list;
 * step `n` takes a file from version `n - 1` to `n`. At open, {@link migrate} applies the
 * missing steps in one `BEGIN IMMEDIATE` transaction, setting `user_version` after each,
 * so a file is always at exactly one known version: a failed step rolls the whole upgrade
 * back. A file with a version newer than the code knows is refused (an older build must
 * not write to a layout it does not understand), and so is a non-empty file that is not
 * ours (version 0 with tables, or another application id).
 *
 * To change the schema, append a step; never edit a released one. Steps may rewrite
 * data (they run inside the transaction) but must not change journal mode or other
 * settings that cannot run in a transaction.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { ContinuityError } from '../../protocol/errors.js';

/** One schema step: takes a file from `version - 1` to `version`. */
export interface Migration {
  readonly version: number;
  readonly description: string;
  up(db: BetterSqlite3.Database): void;
}

/** `MCPC` in ASCII: marks a file as an mcp-continuity store (`PRAGMA application_id`). */
export const APPLICATION_ID = 0x4d435043;

/*
 * Version 1.
 *
 * sessions: one row per SessionRecord; `past_epochs` is a JSON array; `principal` is NULL
 *   when the session is not bound. `(last_active_at, id)` makes idleSince an index-only scan.
 * streams: one row per stream: its head (first_seq/base_chain is the low watermark that
 *   retention moves; last_seq/last_chain the high one), the running byte total of the
 *   retained payloads, and `opened`, the stream's position in its session.
 * events: WITHOUT ROWID, keyed by (session, stream, seq): a replay is a range read of one
 *   b-tree, and no reused rowid can ever splice another event into a stream. `payload` is
 *   the last column so trimming (which reads `at`, `bytes`, `chain`) does not walk the
 *   overflow pages of large payloads.
 *
 * No foreign keys: logs are independent of session records (a session record may be
 * deleted before its log, as the EventLog contract allows), and the store deletes a
 * stream's events and its head in one transaction itself.
 */
const V1 = `
CREATE TABLE sessions (
  id               TEXT    NOT NULL PRIMARY KEY,
  epoch            TEXT    NOT NULL,
  past_epochs      TEXT    NOT NULL,
  protocol_version TEXT    NOT NULL,
  initialize       TEXT    NOT NULL,
  principal        TEXT,
  created_at       INTEGER NOT NULL,
  last_active_at   INTEGER NOT NULL
);
CREATE INDEX sessions_by_last_active ON sessions (last_active_at, id);

CREATE TABLE streams (
  session     TEXT    NOT NULL,
  stream      TEXT    NOT NULL,
  opened      INTEGER NOT NULL,
  kind        TEXT    NOT NULL,
  request_ids TEXT    NOT NULL,
  first_seq   INTEGER NOT NULL,
  base_chain  TEXT    NOT NULL,
  last_seq    INTEGER NOT NULL,
  last_chain  TEXT    NOT NULL,
  bytes       INTEGER NOT NULL,
  closed      INTEGER NOT NULL,
  PRIMARY KEY (session, stream)
) WITHOUT ROWID;

CREATE TABLE events (
  session TEXT    NOT NULL,
  stream  TEXT    NOT NULL,
  seq     INTEGER NOT NULL,
  chain   TEXT    NOT NULL,
  at      INTEGER NOT NULL,
  bytes   INTEGER NOT NULL,
  payload TEXT    NOT NULL,
  PRIMARY KEY (session, stream, seq)
) WITHOUT ROWID;
`;

/*
 * Version 2.
 *
 * process_lock: at most one row (id 1), the process that has the file open: a SQLite file
 *   serves one process (see ./lock.ts).
 */
const V2 = `
CREATE TABLE process_lock (
  id           INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
  pid          INTEGER NOT NULL,
  host         TEXT    NOT NULL,
  pid_ns       TEXT    NOT NULL,
  boot_id      TEXT    NOT NULL,
  nonce        TEXT    NOT NULL,
  started_at   INTEGER NOT NULL,
  heartbeat_at INTEGER NOT NULL
);
`;

/*
 * Version 3.
 *
 * batches replaces events: one row per append call (the outbound stream group-commits, so
 *   one row carries every event of a batch), not one per event. Per event, the cost of a
 *   row (its b-tree cell, its key of two strings, its place in the page) was most of an
 *   append's cost; now it is paid once per batch. A row holds events first_seq..last_seq:
 *   `payloads` is their UTF-8 payloads concatenated, cut by `sizes` (a JSON array of byte
 *   lengths); `chains` is a JSON array of their chain values; `ats` is their timestamp, a
 *   JSON number when they share one, else a JSON array. `bytes` is the sum of `sizes`.
 *   The payloads are the last column, so trimming, which reads the metadata, does not walk
 *   their overflow pages.
 * A rowid table in append order: new rows go to the right edge of the b-tree (SQLite's
 *   cheapest insert) and trimming deletes from the left. Rows are found through
 *   batches_by_stream, never by rowid, so a reused rowid cannot splice a row into another
 *   stream. A row may be partly trimmed: the stream's first_seq is the low watermark, reads
 *   and retention skip the events below it, and the row goes once all of its events are
 *   trimmed.
 *
 * The step moves each v2 event into a one-event row (sizes are recounted from the stored
 * text, and each stream's byte total with them).
 */
const V3 = `
CREATE TABLE batches (
  id        INTEGER PRIMARY KEY,
  session   TEXT    NOT NULL,
  stream    TEXT    NOT NULL,
  first_seq INTEGER NOT NULL,
  last_seq  INTEGER NOT NULL,
  bytes     INTEGER NOT NULL,
  ats       TEXT    NOT NULL,
  sizes     TEXT    NOT NULL,
  chains    TEXT    NOT NULL,
  payloads  BLOB    NOT NULL
);
CREATE UNIQUE INDEX batches_by_stream ON batches (session, stream, last_seq);

INSERT INTO batches (session, stream, first_seq, last_seq, bytes, ats, sizes, chains, payloads)
  SELECT session, stream, seq, seq, length(CAST(payload AS BLOB)), json_quote(at),
    json_array(length(CAST(payload AS BLOB))), json_array(chain), CAST(payload AS BLOB)
  FROM events ORDER BY session, stream, seq;
UPDATE streams SET bytes = coalesce(
  (SELECT sum(b.bytes) FROM batches b WHERE b.session = streams.session AND b.stream = streams.stream), 0);
DROP TABLE events;
`;

/*
 * Version 4.
 *
 * sessions.state: the session's lasting protocol state and application state (JSON, see
 *   SessionRecord.state); NULL until first set, which is also what older rows read as.
 */
const V4 = `ALTER TABLE sessions ADD COLUMN state TEXT;`;

/** The version that added process_lock: from it on, a file can be claimed before it is migrated. */
export const PROCESS_LOCK_VERSION = 2;

/** Every schema step, in order. The last one's version is {@link SCHEMA_VERSION}. */
export const MIGRATIONS: readonly Migration[] = [
  { version: 1, description: 'sessions, streams and events tables', up: (db) => db.exec(V1) },
  { version: 2, description: 'process_lock: the one process using the file', up: (db) => db.exec(V2) },
  { version: 3, description: 'batches: one row per append instead of one per event', up: (db) => db.exec(V3) },
  { version: 4, description: 'sessions.state: lasting protocol state and application state', up: (db) => db.exec(V4) },
];

/** The schema version this code writes. */
export const SCHEMA_VERSION = latestVersion(MIGRATIONS);

/** What {@link migrate} did. */
export interface MigrationResult {
  readonly from: number;
  readonly to: number;
}

/**
 * Refuses a file this code must not touch: another application's, or a newer schema's.
 * Read-only, so it can run before any setting (journal mode) is written to the file.
 */
export function checkSchema(db: BetterSqlite3.Database, migrations: readonly Migration[] = MIGRATIONS): number {
  const latest = latestVersion(migrations);
  const version = db.pragma('user_version', { simple: true }) as number;
  const appId = db.pragma('application_id', { simple: true }) as number;
  if (appId !== 0 && appId !== APPLICATION_ID) {
    throw new ContinuityError('store-foreign', `${db.name} is not an mcp-continuity store (application_id ${appId}); refusing to open it`);
  }
  if (version > latest) {
    throw new ContinuityError(
      'store-foreign',
      `${db.name} has schema version ${version}, newer than this version of mcp-continuity knows (${latest}); ` +
        'it was written by a newer release. Upgrade mcp-continuity, or point the store at another file.',
    );
  }
  if (version === 0) {
    const objects = db.prepare("SELECT count(*) FROM sqlite_schema WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\'").pluck().get() as number;
    if (objects > 0) throw new ContinuityError('store-foreign', `${db.name} is not empty and is not an mcp-continuity store; refusing to open it`);
  }
  return version;
}

/**
 * Brings the file up to the latest version of `migrations` in one immediate transaction
 * (so two processes opening the same new file cannot both create the tables).
 */
export function migrate(db: BetterSqlite3.Database, migrations: readonly Migration[] = MIGRATIONS): MigrationResult {
  const latest = latestVersion(migrations);
  const run = db.transaction((): MigrationResult => {
    const from = checkSchema(db, migrations); // again, under the write lock
    for (const m of migrations) {
      if (m.version <= from) continue;
      m.up(db);
      db.pragma(`user_version = ${m.version}`);
    }
    if (from < latest) db.pragma(`application_id = ${APPLICATION_ID}`);
    return { from, to: latest };
  });
  return run.immediate();
}

function latestVersion(migrations: readonly Migration[]): number {
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new ContinuityError('internal-error', `Migration ${i} has version ${m.version}; versions must be 1, 2, 3 … in order`);
  });
  return migrations.length;
}
