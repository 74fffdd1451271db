/**
 * A file written at schema version 2 (one row per event in `events`) opens at the current
 * version with every session, stream head and retained event intact, and works on.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { chainSeed, nextChain } from '../../src/protocol/event-id.js';
import { isContinuityError } from '../../src/protocol/errors.js';
import { thisProcess } from '../../src/store/sqlite/lock.js';
import { MIGRATIONS, migrate } from '../../src/store/sqlite/schema.js';
import { SQLITE_SCHEMA_VERSION, sqliteStore, sqliteStoreInfo } from '../../src/store/sqlite/index.js';
import type { LogEvent, Store } from '../../src/store/types.js';

const DIR = mkdtempSync(join(tmpdir(), 'mcpc-sqlite-migrate-'));
after(() => rmSync(DIR, { recursive: true, force: true }));

const T0 = 1_700_000_000_000;

interface V2Stream {
  session: string;
  stream: string;
  seed: string;
  /** Every event ever appended (the file keeps those from `firstSeq`). */
  all: LogEvent[];
  firstSeq: number;
  closed: boolean;
}

/** Events with real chains; payloads of 1-, 2-, 3- and 4-byte characters, and an empty one. */
function v2Stream(session: string, stream: string, payloads: string[], firstSeq: number, closed = false): V2Stream {
  const seed = chainSeed('epoch', stream);
  let chain = seed;
  const all = payloads.map((payload, i) => {
    chain = nextChain(chain, payload);
    return { seq: i + 1, chain, payload, at: T0 + i };
  });
  return { session, stream, seed, all, firstSeq, closed };
}

/** A file as the version 2 store wrote it: the released steps 1 and 2, then its rows. */
function writeV2File(path: string, streams: V2Stream[]): void {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  migrate(db, MIGRATIONS.slice(0, 2));
  db.prepare(
    `INSERT INTO sessions (id, epoch, past_epochs, protocol_version, initialize, principal, created_at, last_active_at)
    VALUES ('S', 'epoch', '[]', '2025-11-25', '{}', NULL, ?, ?)`,
  ).run(T0, T0);
  const stream = db.prepare(`INSERT INTO streams (session, stream, opened, kind, request_ids, first_seq, base_chain, last_seq, last_chain, bytes, closed)
    VALUES (?, ?, ?, 'request', '["1"]', ?, ?, ?, ?, ?, ?)`);
  const event = db.prepare('INSERT INTO events (session, stream, seq, chain, at, bytes, payload) VALUES (?, ?, ?, ?, ?, ?, ?)');
  streams.forEach((s, i) => {
    const kept = s.all.slice(s.firstSeq - 1);
    const last = s.all[s.all.length - 1];
    const base = s.firstSeq === 1 ? s.seed : (s.all[s.firstSeq - 2] as LogEvent).chain;
    const bytes = kept.reduce((n, e) => n + Buffer.byteLength(e.payload), 0);
    stream.run(s.session, s.stream, i + 1, s.firstSeq, base, last?.seq ?? 0, last?.chain ?? s.seed, bytes, s.closed ? 1 : 0);
    for (const e of kept) event.run(s.session, s.stream, e.seq, e.chain, e.at, Buffer.byteLength(e.payload), e.payload);
  });
  db.close();
}

async function readAll(store: Store, s: V2Stream): Promise<LogEvent[]> {
  const events = await store.log.read(s.session, s.stream, 0, Number.MAX_SAFE_INTEGER);
  return events.map((e) => ({ seq: e.seq, chain: e.chain, payload: e.payload, at: e.at }));
}

describe('sqlite store: a version 2 file', () => {
  it('opens at the current version with its heads and events, and takes appends and trimming', async () => {
    const path = join(DIR, 'v2.db');
    const a = v2Stream('S', 'a', ['{"n":1}', 'é', '€uro', '\u{1F600}', '', '{"n":6}', '{"n":7}'], 3);
    const b = v2Stream('S', 'b', ['{"done":true}'], 1, true);
    const empty = v2Stream('S', 'empty', [], 1);
    writeV2File(path, [a, b, empty]);

    const store = sqliteStore({ path, retention: { maxEvents: 6 } });
    try {
      assert.equal(sqliteStoreInfo(store)?.schemaVersion, SQLITE_SCHEMA_VERSION);
      assert.deepEqual(await store.log.streams('S'), ['a', 'b', 'empty']);
      assert.deepEqual(await store.log.head('S', 'a'), {
        kind: 'request',
        requestIds: ['1'],
        firstSeq: 3,
        baseChain: (a.all[1] as LogEvent).chain,
        lastSeq: 7,
        lastChain: (a.all[6] as LogEvent).chain,
        closed: false,
      });
      assert.equal((await store.log.head('S', 'b'))?.closed, true);
      assert.deepEqual(await readAll(store, a), a.all.slice(2));
      assert.deepEqual(await store.log.read('S', 'a', 3, 2).then((p) => p.map((e) => e.payload)), ['\u{1F600}', '']);
      assert.deepEqual(await readAll(store, b), b.all);
      assert.deepEqual(await readAll(store, empty), []);

      // Appends continue the migrated log; retention (6 events) trims the migrated rows.
      let chain = (a.all[6] as LogEvent).chain;
      const more = ['{"n":8}', '{"n":9}', '{"n":10}'].map((payload, i) => {
        chain = nextChain(chain, payload);
        return { seq: 8 + i, chain, payload, at: T0 + 100 };
      });
      await store.log.append('S', 'a', more);
      const head = await store.log.head('S', 'a');
      assert.equal(head?.firstSeq, 5);
      assert.equal(head?.baseChain, (a.all[3] as LogEvent).chain);
      assert.deepEqual(await readAll(store, a), [...a.all.slice(4), ...more]);
    } finally {
      await store.close();
    }

    const db = new Database(path, { readonly: true });
    assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
    assert.equal(db.prepare("SELECT count(*) FROM sqlite_schema WHERE name = 'events'").pluck().get(), 0, 'the v2 table is gone');
    db.close();
  });

  it('held by a live process, it is refused before it is migrated', () => {
    const path = join(DIR, 'v2-held.db');
    const a = v2Stream('S', 'a', ['{"n":1}'], 1);
    writeV2File(path, [a]);
    // The holder: a live process on this host (our parent), as a v2 build would have claimed it.
    const me = thisProcess();
    let db = new Database(path);
    db.prepare(
      `INSERT INTO process_lock (id, pid, host, pid_ns, boot_id, nonce, started_at, heartbeat_at)
      VALUES (1, ?, ?, ?, ?, 'v2-holder', ?, ?)`,
    ).run(process.ppid, me.host, me.pidNs, me.bootId, Date.now(), Date.now());
    db.close();
    assert.throws(
      () => sqliteStore({ path }),
      (err: unknown) => isContinuityError(err, 'store-locked'),
    );
    db = new Database(path, { readonly: true });
    assert.equal(db.pragma('user_version', { simple: true }), 2, 'not migrated');
    assert.equal(db.prepare('SELECT count(*) FROM events').pluck().get(), 1);
    db.close();
  });
});
