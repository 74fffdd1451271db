/**
 * The SQLite store's prepared statements, its connection wrapper (failures mapped to
 * `store-unavailable`) and the multi-row insert: the SQL side of `sqlite.ts`.
 */
import Database from 'better-sqlite3';
// The statements' types live in this namespace; naming it lets their declarations be emitted.
import type BetterSqlite3 from 'better-sqlite3';
import { ContinuityError } from '../protocol/errors.js';
import { byteLength } from './rules.js';
import type { ProcessLock } from './sqlite-lock.js';
import type { SessionRow, StreamRow, TrimRow } from './sqlite-rows.js';
import type { LogEvent, StreamInfo } from './types.js';

export type Db = BetterSqlite3.Database;

/** Rows per multi-row insert (7 parameters each, far below SQLite's parameter limit). */
const INSERT_ROWS = 32;

/** Every statement, prepared once per store. */
/** Every statement the store uses (named, so the declarations can name their types). */
export interface Statements {
  insertSession: BetterSqlite3.Statement<[string, string, string, string, string, string | null, number, number]>;
  getSession: BetterSqlite3.Statement<[string], SessionRow>;
  updateSession: BetterSqlite3.Statement<[string, string, string, string, string | null, number, number, string]>;
  deleteSession: BetterSqlite3.Statement<[string]>;
  countSessions: BetterSqlite3.Statement<[], number>;
  idleSessions: BetterSqlite3.Statement<[number, number], string>;
  insertStream: BetterSqlite3.Statement<[string, string, string, StreamInfo['kind'], string, string, string]>;
  getStream: BetterSqlite3.Statement<[string, string], StreamRow>;
  updateHead: BetterSqlite3.Statement<[number, string, number, string, number, string, string]>;
  closeStream: BetterSqlite3.Statement<[string, string]>;
  listStreams: BetterSqlite3.Statement<[string], string>;
  deleteStream: BetterSqlite3.Statement<[string, string]>;
  deleteSessionStreams: BetterSqlite3.Statement<[string]>;
  insertEvent: BetterSqlite3.Statement<[string, string, number, string, number, number, string]>;
  insertEvents: BetterSqlite3.Statement<unknown[]>;
  readEvents: BetterSqlite3.Statement<[string, string, number, number], LogEvent>;
  scanOldest: BetterSqlite3.Statement<[string, string, number], TrimRow>;
  trimCut: BetterSqlite3.Statement<[string, string, number, string, string, number, number], { bytes: number; chain: string | null }>;
  trimEvents: BetterSqlite3.Statement<[string, string, number, number]>;
  deleteStreamEvents: BetterSqlite3.Statement<[string, string]>;
  deleteSessionEvents: BetterSqlite3.Statement<[string]>;
}

function prepare(db: Db): Statements {
  return {
    insertSession: db.prepare<[string, string, string, string, string, string | null, number, number]>(
      `INSERT INTO sessions (id, epoch, past_epochs, protocol_version, initialize, principal, created_at, last_active_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    getSession: db.prepare<[string], SessionRow>('SELECT * FROM sessions WHERE id = ?'),
    updateSession: db.prepare<[string, string, string, string, string | null, number, number, string]>(
      `UPDATE sessions SET epoch = ?, past_epochs = ?, protocol_version = ?, initialize = ?, principal = ?,
         created_at = ?, last_active_at = ? WHERE id = ?`,
    ),
    deleteSession: db.prepare<[string]>('DELETE FROM sessions WHERE id = ?'),
    countSessions: db.prepare<[], number>('SELECT count(*) FROM sessions').pluck(),
    idleSessions: db.prepare<[number, number], string>(
      'SELECT id FROM sessions WHERE last_active_at < ? ORDER BY last_active_at, id LIMIT ?',
    ).pluck(),

    insertStream: db.prepare<[string, string, string, StreamInfo['kind'], string, string, string]>(
      `INSERT INTO streams (session, stream, opened, kind, request_ids, first_seq, base_chain, last_seq, last_chain, bytes, closed)
       VALUES (?, ?, (SELECT coalesce(max(opened), 0) + 1 FROM streams WHERE session = ?), ?, ?, 1, ?, 0, ?, 0, 0)`,
    ),
    getStream: db.prepare<[string, string], StreamRow>(
      `SELECT kind, request_ids, first_seq, base_chain, last_seq, last_chain, bytes, closed
       FROM streams WHERE session = ? AND stream = ?`,
    ),
    updateHead: db.prepare<[number, string, number, string, number, string, string]>(
      `UPDATE streams SET first_seq = ?, base_chain = ?, last_seq = ?, last_chain = ?, bytes = ?
       WHERE session = ? AND stream = ?`,
    ),
    closeStream: db.prepare<[string, string]>('UPDATE streams SET closed = 1 WHERE session = ? AND stream = ?'),
    listStreams: db.prepare<[string], string>('SELECT stream FROM streams WHERE session = ? ORDER BY opened').pluck(),
    deleteStream: db.prepare<[string, string]>('DELETE FROM streams WHERE session = ? AND stream = ?'),
    deleteSessionStreams: db.prepare<[string]>('DELETE FROM streams WHERE session = ?'),

    insertEvent: db.prepare<[string, string, number, string, number, number, string]>(
      'INSERT INTO events (session, stream, seq, chain, at, bytes, payload) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    /** {@link INSERT_ROWS} events in one statement: one call and one bind per chunk, not per event. */
    insertEvents: db.prepare<unknown[]>(
      `INSERT INTO events (session, stream, seq, chain, at, bytes, payload) VALUES ${Array(INSERT_ROWS).fill('(?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
    ),
    readEvents: db.prepare<[string, string, number, number], LogEvent>(
      'SELECT seq, chain, payload, at FROM events WHERE session = ? AND stream = ? AND seq > ? ORDER BY seq LIMIT ?',
    ),
    /** Oldest retained events first: the candidates for trimming. */
    scanOldest: db.prepare<[string, string, number], TrimRow>(
      'SELECT seq, chain, at, bytes FROM events WHERE session = ? AND stream = ? AND seq >= ? ORDER BY seq',
    ),
    /** Bytes of the events in `[from, to)` and the chain of event `to - 1`: a cut made by arithmetic. */
    trimCut: db.prepare<[string, string, number, string, string, number, number], { bytes: number; chain: string | null }>(
      `SELECT coalesce(sum(bytes), 0) AS bytes,
         (SELECT chain FROM events WHERE session = ? AND stream = ? AND seq = ? - 1) AS chain
       FROM events WHERE session = ? AND stream = ? AND seq >= ? AND seq < ?`,
    ),
    trimEvents: db.prepare<[string, string, number, number]>(
      'DELETE FROM events WHERE session = ? AND stream = ? AND seq >= ? AND seq < ?',
    ),
    deleteStreamEvents: db.prepare<[string, string]>('DELETE FROM events WHERE session = ? AND stream = ?'),
    deleteSessionEvents: db.prepare<[string]>('DELETE FROM events WHERE session = ?'),
  };
}


/** The connection and what every method needs from it. */
export class Connection {
  readonly db: Db;
  readonly st: Statements;
  readonly lock: ProcessLock | undefined;

  constructor(db: Db, lock: ProcessLock | undefined) {
    this.db = db;
    this.st = prepare(db);
    this.lock = lock;
  }

  /** Runs `fn` against the open database; maps lock and I/O failures to `store-unavailable`. */
  use<T>(fn: (st: Statements) => T): T {
    if (!this.db.open) throw new ContinuityError('store-unavailable', 'SQLite store is closed');
    this.lock?.check();
    try {
      return fn(this.st);
    } catch (err) {
      if (err instanceof Database.SqliteError && /^SQLITE_(BUSY|LOCKED|IOERR|FULL|READONLY|CANTOPEN)/.test(err.code)) {
        throw new ContinuityError('store-unavailable', `SQLite store unavailable: ${err.message}`, { sqlite: err.code }, { cause: err });
      }
      throw err;
    }
  }
}

/** Inserts `events` in chunks of {@link INSERT_ROWS}, the rest one by one; returns their bytes. */
export function insertEvents(st: Statements, session: string, stream: string, events: readonly LogEvent[]): number {
  let bytes = 0;
  let i = 0;
  if (events.length >= INSERT_ROWS) {
    const params: unknown[] = new Array<unknown>(INSERT_ROWS * 7);
    for (; i + INSERT_ROWS <= events.length; i += INSERT_ROWS) {
      for (let j = 0; j < INSERT_ROWS; j++) {
        const e = events[i + j] as LogEvent;
        const b = e.bytes ?? byteLength(e.payload);
        const k = j * 7;
        params[k] = session;
        params[k + 1] = stream;
        params[k + 2] = e.seq;
        params[k + 3] = e.chain;
        params[k + 4] = e.at;
        params[k + 5] = b;
        params[k + 6] = e.payload;
        bytes += b;
      }
      st.insertEvents.run(params);
    }
  }
  for (; i < events.length; i++) {
    const e = events[i] as LogEvent;
    const b = e.bytes ?? byteLength(e.payload);
    st.insertEvent.run(session, stream, e.seq, e.chain, e.at, b, e.payload);
    bytes += b;
  }
  return bytes;
}

