/**
 * The SQLite store's prepared statements and its connection wrapper (failures mapped to
 * `store-unavailable`): the SQL side of the store in `./index.ts`.
 */
import { isSqliteError } from './driver.js';
// The statements' types live in this namespace; naming it lets their declarations be emitted.
import type BetterSqlite3 from 'better-sqlite3';
import { ContinuityError } from '../../protocol/errors.js';
import type { BatchRow, BatchRowWithPayloads, OldestBatchRow } from './batches.js';
import type { ProcessLock } from './lock.js';
import type { AppendHeadRow, ClaimedHead, SessionRow, StreamRow } from './rows.js';
import type { StreamInfo } from '../types.js';

export type Db = BetterSqlite3.Database;

/** Every statement the store uses, prepared once per store (named, so the declarations can name their types). */
export interface Statements {
  insertSession: BetterSqlite3.Statement<[string, string, string, string, string, string | null, number, number, string | null]>;
  getSession: BetterSqlite3.Statement<[string], SessionRow>;
  updateSession: BetterSqlite3.Statement<[string, string, string, string, string | null, number, number, string | null, string]>;
  deleteSession: BetterSqlite3.Statement<[string]>;
  countSessions: BetterSqlite3.Statement<[], number>;
  idleSessions: BetterSqlite3.Statement<[number, number], string>;
  insertStream: BetterSqlite3.Statement<[string, string, string, StreamInfo['kind'], string, string, string]>;
  getStream: BetterSqlite3.Statement<[string, string], StreamRow>;
  getAppendHead: BetterSqlite3.Statement<[string, string], AppendHeadRow>;
  getFirstSeq: BetterSqlite3.Statement<[string, string], number>;
  claimHead: BetterSqlite3.Statement<[number, string, number, string, string, number], ClaimedHead>;
  updateWindow: BetterSqlite3.Statement<[number, string, number, string, string]>;
  closeStream: BetterSqlite3.Statement<[string, string]>;
  listStreams: BetterSqlite3.Statement<[string], string>;
  deleteStream: BetterSqlite3.Statement<[string, string]>;
  deleteSessionStreams: BetterSqlite3.Statement<[string]>;
  insertBatch: BetterSqlite3.Statement<[string, string, number, number, number, string, string, string, Buffer]>;
  readBatches: BetterSqlite3.Statement<[string, string, number], BatchRowWithPayloads>;
  scanOldest: BetterSqlite3.Statement<[string, string, number], BatchRow>;
  trimBatches: BetterSqlite3.Statement<[string, string, number]>;
  deleteStreamBatches: BetterSqlite3.Statement<[string, string]>;
  deleteSessionBatches: BetterSqlite3.Statement<[string]>;
  sumBytes: BetterSqlite3.Statement<[], number>;
  oldestBatches: BetterSqlite3.Statement<[number], OldestBatchRow>;
  getWindow: BetterSqlite3.Statement<[string, string], { first_seq: number; bytes: number }>;
  deleteBatch: BetterSqlite3.Statement<[number]>;
}

function prepare(db: Db): Statements {
  return {
    insertSession: db.prepare<[string, string, string, string, string, string | null, number, number, string | null]>(
      `INSERT INTO sessions (id, epoch, past_epochs, protocol_version, initialize, principal, created_at, last_active_at, state)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    getSession: db.prepare<[string], SessionRow>('SELECT * FROM sessions WHERE id = ?'),
    updateSession: db.prepare<[string, string, string, string, string | null, number, number, string | null, string]>(
      `UPDATE sessions SET epoch = ?, past_epochs = ?, protocol_version = ?, initialize = ?, principal = ?,
         created_at = ?, last_active_at = ?, state = ? WHERE id = ?`,
    ),
    deleteSession: db.prepare<[string]>('DELETE FROM sessions WHERE id = ?'),
    countSessions: db.prepare<[], number>('SELECT count(*) FROM sessions').pluck(),
    idleSessions: db.prepare<[number, number], string>('SELECT id FROM sessions WHERE last_active_at < ? ORDER BY last_active_at, id LIMIT ?').pluck(),

    insertStream: db.prepare<[string, string, string, StreamInfo['kind'], string, string, string]>(
      `INSERT INTO streams (session, stream, opened, kind, request_ids, first_seq, base_chain, last_seq, last_chain, bytes, closed)
       VALUES (?, ?, (SELECT coalesce(max(opened), 0) + 1 FROM streams WHERE session = ?), ?, ?, 1, ?, 0, ?, 0, 0)`,
    ),
    getStream: db.prepare<[string, string], StreamRow>(
      `SELECT kind, request_ids, first_seq, base_chain, last_seq, last_chain, bytes, closed
       FROM streams WHERE session = ? AND stream = ?`,
    ),
    /**
     * An append's check and claim in one statement: moves the head to the batch's last event
     * only if the stream exists, is open and ends where the batch begins.
     */
    claimHead: db.prepare<[number, string, number, string, string, number], ClaimedHead>(
      `UPDATE streams SET last_seq = ?, last_chain = ?, bytes = bytes + ?
       WHERE session = ? AND stream = ? AND last_seq = ? AND closed = 0
       RETURNING first_seq, base_chain, bytes`,
    ),
    /** Retention moved the low end of the window. */
    updateWindow: db.prepare<[number, string, number, string, string]>(
      'UPDATE streams SET first_seq = ?, base_chain = ?, bytes = ? WHERE session = ? AND stream = ?',
    ),
    closeStream: db.prepare<[string, string]>('UPDATE streams SET closed = 1 WHERE session = ? AND stream = ?'),
    listStreams: db.prepare<[string], string>('SELECT stream FROM streams WHERE session = ? ORDER BY opened').pluck(),
    deleteStream: db.prepare<[string, string]>('DELETE FROM streams WHERE session = ? AND stream = ?'),
    deleteSessionStreams: db.prepare<[string]>('DELETE FROM streams WHERE session = ?'),

    /** What an append needs of the head (no JSON to parse). */
    getAppendHead: db.prepare<[string, string], AppendHeadRow>(
      'SELECT first_seq, base_chain, last_seq, last_chain, bytes, closed FROM streams WHERE session = ? AND stream = ?',
    ),
    getFirstSeq: db.prepare<[string, string], number>('SELECT first_seq FROM streams WHERE session = ? AND stream = ?').pluck(),

    insertBatch: db.prepare<[string, string, number, number, number, string, string, string, Buffer]>(
      `INSERT INTO batches (session, stream, first_seq, last_seq, bytes, ats, sizes, chains, payloads)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    /** The rows holding events `>= ?`, in order: a range read of batches_by_stream. */
    readBatches: db.prepare<[string, string, number], BatchRowWithPayloads>(
      `SELECT first_seq, last_seq, bytes, ats, sizes, chains, payloads FROM batches
       WHERE session = ? AND stream = ? AND last_seq >= ? ORDER BY last_seq`,
    ),
    /** The same without the payloads: the candidates for trimming, oldest first. */
    scanOldest: db.prepare<[string, string, number], BatchRow>(
      `SELECT first_seq, last_seq, bytes, ats, sizes, chains FROM batches
       WHERE session = ? AND stream = ? AND last_seq >= ? ORDER BY last_seq`,
    ),
    /** Deletes the rows whose events are all below the new low watermark. */
    trimBatches: db.prepare<[string, string, number]>('DELETE FROM batches WHERE session = ? AND stream = ? AND last_seq < ?'),
    deleteStreamBatches: db.prepare<[string, string]>('DELETE FROM batches WHERE session = ? AND stream = ?'),
    deleteSessionBatches: db.prepare<[string]>('DELETE FROM batches WHERE session = ?'),
    // The store's budget (see ./budget.ts): ids grow with each insert, so the lowest is the oldest batch.
    sumBytes: db.prepare<[], number>('SELECT coalesce(sum(bytes), 0) FROM streams').pluck(),
    oldestBatches: db.prepare<[number], OldestBatchRow>(
      'SELECT id, session, stream, first_seq, last_seq, bytes, ats, sizes, chains FROM batches ORDER BY id LIMIT ?',
    ),
    getWindow: db.prepare<[string, string], { first_seq: number; bytes: number }>('SELECT first_seq, bytes FROM streams WHERE session = ? AND stream = ?'),
    deleteBatch: db.prepare<[number]>('DELETE FROM batches WHERE id = ?'),
  };
}

/** The connection and what every method needs from it. */
export class Connection {
  readonly db: Db;
  readonly st: Statements;
  readonly lock: ProcessLock | undefined;
  /**
   * Runs before every {@link use}: commits the appends queued for group commit, so every
   * other operation sees them (operations take effect in the order they were called).
   */
  beforeUse: (() => void) | undefined;

  constructor(db: Db, lock: ProcessLock | undefined) {
    this.db = db;
    this.st = prepare(db);
    this.lock = lock;
  }

  /** Throws unless the database is open and still this process's. */
  check(): void {
    if (!this.db.open) throw new ContinuityError('store-unavailable', 'SQLite store is closed');
    this.lock?.check();
  }

  /** Runs `fn` against the open database; maps lock and I/O failures to `store-unavailable`. */
  use<T>(fn: (st: Statements) => T): T {
    this.beforeUse?.();
    this.check();
    try {
      return fn(this.st);
    } catch (err) {
      if (isSqliteError(err) && /^SQLITE_(BUSY|LOCKED|IOERR|FULL|READONLY|CANTOPEN)/.test(err.code)) {
        throw new ContinuityError('store-unavailable', `SQLite store unavailable: ${err.message}`, { sqlite: err.code }, { cause: err });
      }
      throw err;
    }
  }
}
