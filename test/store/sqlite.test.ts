import { describe, it } from 'node:test';
import { tempFiles } from '../helpers/temp-files.js';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { chainSeed, nextChain } from '../../src/protocol/event-id.js';
import { isContinuityError } from '../../src/protocol/errors.js';
import { APPLICATION_ID, migrate, type Migration } from '../../src/store/sqlite/schema.js';
import { SQLITE_SCHEMA_VERSION, sqliteStore, sqliteStoreInfo, type SqliteStoreOptions } from '../../src/store/sqlite/index.js';
import { memoryStore } from '../../src/store/memory/index.js';
import type { LogEvent, SessionRecord, Store, StreamInfo } from '../../src/store/types.js';
import { storeContract } from './contract.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const files = tempFiles('mcp-continuity-sqlite-');
const DIR = files.dir;
/** A fresh database path inside the suite's temp dir. */
const tempPath = (tag = 'db'): string => files.path(tag);

storeContract('sqlite', (o) => sqliteStore({ path: tempPath('contract'), ...o }));
storeContract('sqlite :memory:', (o) => sqliteStore({ path: ':memory:', ...o }));

const REQUEST: StreamInfo = { kind: 'request', requestIds: ['1'] };
const T0 = 1_700_000_000_000;

/** Contiguous, chained events for one stream, the way the server makes them. */
class Writer {
  readonly seed: string;
  seq = 0;
  chain: string;
  readonly all: LogEvent[] = [];

  constructor(stream: string) {
    this.seed = chainSeed('epoch', stream);
    this.chain = this.seed;
  }

  messages(count: number, tag = 'm', at = T0): LogEvent[] {
    const out: LogEvent[] = [];
    for (let i = 0; i < count; i++) {
      const seq = ++this.seq;
      const payload = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { tag, seq } });
      this.chain = nextChain(this.chain, payload);
      out.push({ seq, chain: this.chain, payload, at });
    }
    this.all.push(...out);
    return out;
  }

  chainOf(seq: number): string {
    return seq === 0 ? this.seed : (this.all[seq - 1] as LogEvent).chain;
  }
}

function record(id: string, patch: Partial<SessionRecord> = {}): SessionRecord {
  return {
    id,
    epoch: 'epochA',
    pastEpochs: ['e0'],
    protocolVersion: '2025-11-25',
    initialize: '{"method":"initialize"}',
    principal: 'user:a',
    createdAt: T0,
    lastActiveAt: T0,
    ...patch,
  };
}

function plain(events: readonly LogEvent[]): LogEvent[] {
  return events.map((e) => ({ seq: e.seq, chain: e.chain, payload: e.payload, at: e.at }));
}

/** Opens a store and closes it at the end of `fn`. */
async function withStore<T>(options: SqliteStoreOptions, fn: (store: Store) => Promise<T>): Promise<T> {
  const store = sqliteStore(options);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/** A second, raw connection to the file (read-only unless asked). */
function raw(path: string, readonly = true): Database.Database {
  return new Database(path, { readonly, fileMustExist: true });
}

/** Every stream is exactly firstSeq..lastSeq, each chain continuing the previous one. */
async function assertConsistent(store: Store, session: string, stream: string): Promise<{ firstSeq: number; lastSeq: number }> {
  const h = await store.log.head(session, stream);
  assert.ok(h, `${session}/${stream} exists`);
  const events = await store.log.read(session, stream, 0, Number.MAX_SAFE_INTEGER);
  assert.equal(events.length, h.lastSeq - h.firstSeq + 1, `${session}/${stream}: exactly firstSeq..lastSeq`);
  let chain = h.baseChain;
  let seq = h.firstSeq;
  for (const e of events) {
    assert.equal(e.seq, seq++, `${session}/${stream}: contiguous`);
    chain = nextChain(chain, e.payload);
    assert.equal(e.chain, chain, `${session}/${stream} seq ${e.seq}: chain continues`);
  }
  assert.equal(chain, h.lastChain, `${session}/${stream}: head chain`);
  return { firstSeq: h.firstSeq, lastSeq: h.lastSeq };
}

describe('sqlite store', () => {
  describe('options', () => {
    it('names itself sqlite; a file is durable, :memory: is not', async () => {
      await withStore({ path: tempPath() }, async (s) => {
        assert.equal(s.name, 'sqlite');
        assert.equal(s.durable, true);
      });
      await withStore({ path: ':memory:' }, async (s) => assert.equal(s.durable, false));
    });

    it('bad options throw RangeError/TypeError before the file is created', () => {
      const path = tempPath('bad');
      const cases: Array<[unknown, typeof RangeError | typeof TypeError, RegExp]> = [
        [{ path, retention: { maxEvents: 0 } }, RangeError, /retention\.maxEvents must be a positive number/],
        [{ path, retention: { maxBytes: -1 } }, RangeError, /retention\.maxBytes/],
        [{ path, retention: { maxAgeMs: Number.NaN } }, RangeError, /retention\.maxAgeMs/],
        [{ path, durability: 'fast' }, RangeError, /durability must be 'normal' or 'full', got "fast"/],
        [{ path, durability: 1 }, RangeError, /durability/],
        [{ path: '' }, TypeError, /path must be a file path or ':memory:'/],
        [{}, TypeError, /path/],
        [undefined, TypeError, /options/],
        [{ path, now: 5 }, TypeError, /now must be a function/],
      ];
      for (const [options, type, message] of cases) {
        assert.throws(
          () => sqliteStore(options as SqliteStoreOptions),
          (err: unknown) => err instanceof type && message.test(err.message),
          JSON.stringify(options),
        );
      }
      assert.equal(existsSync(path), false);
    });

    it('WAL journal; durability sets PRAGMA synchronous (default normal, full on request)', async () => {
      await withStore({ path: tempPath() }, async (s) => {
        const info = sqliteStoreInfo(s);
        assert.ok(info);
        assert.equal(info.journalMode, 'wal');
        assert.equal(info.synchronous, 'normal');
        assert.equal(info.schemaVersion, SQLITE_SCHEMA_VERSION);
        assert.ok(info.busyTimeoutMs > 0);
      });
      await withStore({ path: tempPath(), durability: 'full' }, async (s) => {
        assert.equal(sqliteStoreInfo(s)?.synchronous, 'full');
      });
      await withStore({ path: tempPath(), durability: 'normal' }, async (s) => {
        assert.equal(sqliteStoreInfo(s)?.synchronous, 'normal');
      });
      assert.equal(sqliteStoreInfo(memoryStore()), undefined);
    });

    it('close is idempotent; later calls fail with store-unavailable', async () => {
      const store = sqliteStore({ path: tempPath() });
      await store.close();
      await store.close();
      await assert.rejects(store.sessions.get('x'), (err) => isContinuityError(err, 'store-unavailable'));
      await assert.rejects(store.log.append('S', 'st', []), (err) => isContinuityError(err, 'store-unavailable'));
      assert.throws(
        () => sqliteStoreInfo(store),
        (err) => isContinuityError(err, 'store-unavailable'),
      );
    });
  });

  describe('restart survival', () => {
    it('sessions, streams, heads, low watermark and events survive close and reopen', async () => {
      const path = tempPath('reopen');
      const retention = { maxEvents: 5 };
      const a = new Writer('a');
      const b = new Writer('b');
      const g = new Writer('get');
      await withStore({ path, retention }, async (s) => {
        await s.sessions.create(record('S1', { pastEpochs: [], lastActiveAt: T0 + 1 }));
        await s.sessions.create(record('S2', { principal: undefined }));
        await s.log.openStream('S1', 'b', b.seed, REQUEST);
        await s.log.openStream('S1', 'a', a.seed, { kind: 'request', requestIds: ['"x"', '2'] });
        await s.log.openStream('S1', 'get', g.seed, { kind: 'standalone', requestIds: [] });
        await s.log.append('S1', 'a', a.messages(12)); // trimmed to 8..12
        await s.log.append('S1', 'b', b.messages(3));
        await s.log.closeStream('S1', 'b');
      });
      // Reopen with a larger window: trimmed events stay gone, the watermark stays put.
      await withStore({ path, retention: { maxEvents: 1000 } }, async (s) => {
        assert.deepEqual(await s.sessions.get('S1'), record('S1', { pastEpochs: [], lastActiveAt: T0 + 1 }));
        const s2 = await s.sessions.get('S2');
        assert.ok(s2 && !('principal' in s2));
        assert.equal(await s.sessions.count(), 2);
        assert.deepEqual(await s.sessions.idleSince(T0 + 1, 10), ['S2']);
        assert.deepEqual(await s.log.streams('S1'), ['b', 'a', 'get']);
        assert.deepEqual(await s.log.head('S1', 'a'), {
          kind: 'request',
          requestIds: ['"x"', '2'],
          firstSeq: 8,
          baseChain: a.chainOf(7),
          lastSeq: 12,
          lastChain: a.chain,
          closed: false,
        });
        assert.deepEqual(await s.log.head('S1', 'b'), {
          kind: 'request',
          requestIds: ['1'],
          firstSeq: 1,
          baseChain: b.seed,
          lastSeq: 3,
          lastChain: b.chain,
          closed: true,
        });
        assert.deepEqual(await s.log.head('S1', 'get'), {
          kind: 'standalone',
          requestIds: [],
          firstSeq: 1,
          baseChain: g.seed,
          lastSeq: 0,
          lastChain: g.seed,
          closed: false,
        });
        assert.deepEqual(plain(await s.log.read('S1', 'a', 0, 100)), a.all.slice(7), 'a trimmed cursor reads from the watermark');
        assert.deepEqual(plain(await s.log.read('S1', 'a', 9, 100)), a.all.slice(9));
        assert.deepEqual(plain(await s.log.read('S1', 'b', 0, 100)), b.all);

        // The log continues where it stopped, and still refuses what does not continue it.
        const stale = new Writer('a');
        await assert.rejects(s.log.append('S1', 'a', stale.messages(1)), (err) => isContinuityError(err, 'store-conflict'));
        await assert.rejects(s.log.append('S1', 'b', b.messages(1)), (err) => isContinuityError(err, 'store-conflict'));
        b.all.pop();
        await s.log.append('S1', 'a', a.messages(2));
        await assertConsistent(s, 'S1', 'a');
        assert.equal((await s.log.head('S1', 'a'))?.firstSeq, 8);
      });
    });

    it('a writer killed with SIGKILL mid-append leaves a contiguous, chained log holding every acknowledged append', async (t) => {
      const path = tempPath('kill');
      const script = join(DIR, 'writer.mts');
      const url = (p: string) => JSON.stringify(pathToFileURL(join(ROOT, p)).href);
      writeFileSync(
        script,
        `
import { sqliteStore } from ${url('src/store/sqlite/index.ts')};
import { chainSeed, nextChain } from ${url('src/protocol/event-id.ts')};
const store = sqliteStore({ path: process.argv[2], retention: { maxEvents: 300 } });
const streams = [['A', 's1'], ['A', 's2'], ['B', 's1']];
const state = [];
for (const [session, stream] of streams) {
  if (!(await store.sessions.get(session))) {
    await store.sessions.create({ id: session, epoch: 'e', pastEpochs: [], protocolVersion: 'p', initialize: '{}', createdAt: 1, lastActiveAt: 1 });
  }
  let h = await store.log.head(session, stream);
  if (!h) {
    await store.log.openStream(session, stream, chainSeed('e', stream), { kind: 'request', requestIds: [] });
    h = await store.log.head(session, stream);
  }
  state.push({ seq: h.lastSeq, chain: h.lastChain });
}
process.stdout.write('ready\\n');
for (let i = 0; ; i++) {
  const [session, stream] = streams[i % streams.length];
  const s = state[i % streams.length];
  const events = [];
  for (let k = 0; k < 1 + (i % 40); k++) {
    const payload = JSON.stringify({ i, k, pad: 'x'.repeat((i * 31) % 700) });
    s.chain = nextChain(s.chain, payload);
    events.push({ seq: ++s.seq, chain: s.chain, payload, at: Date.now() });
  }
  await store.log.append(session, stream, events);
  process.stdout.write(session + ' ' + stream + ' ' + s.seq + '\\n');
}
`,
      );
      const acknowledged = new Map<string, number>();
      for (let round = 0; round < 3; round++) {
        const child = spawn(process.execPath, ['--import', 'tsx', script, path], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        let err = '';
        child.stderr.on('data', (d: Buffer) => (err += d.toString()));
        const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`writer did not start: ${err}`)), 30_000);
          child.stdout.on('data', (d: Buffer) => {
            out += d.toString();
            if (out.includes('ready\n')) {
              clearTimeout(timer);
              resolve();
            }
          });
          child.on('exit', () => reject(new Error(`writer exited early: ${err}`)));
        });
        await new Promise((r) => setTimeout(r, 200));
        child.kill('SIGKILL');
        assert.equal(await exited, 'SIGKILL', err);
        // Only complete lines: each names an append that had resolved (committed).
        for (const line of out.slice(0, out.lastIndexOf('\n')).split('\n').slice(1)) {
          const [session, stream, seq] = line.split(' ');
          acknowledged.set(`${session}/${stream}`, Number(seq));
        }
        assert.ok(acknowledged.size === 3, `round ${round}: the writer appended to every stream (${out.length} bytes of output)`);
        t.diagnostic(`round ${round}: acknowledged ${JSON.stringify(Object.fromEntries(acknowledged))}`);

        await withStore({ path, retention: { maxEvents: 300 } }, async (s) => {
          assert.equal(await s.sessions.count(), 2);
          for (const [session, stream] of [
            ['A', 's1'],
            ['A', 's2'],
            ['B', 's1'],
          ] as const) {
            const { firstSeq, lastSeq } = await assertConsistent(s, session, stream);
            const acked = acknowledged.get(`${session}/${stream}`) ?? 0;
            assert.ok(lastSeq >= acked, `${session}/${stream}: head ${lastSeq} keeps acknowledged ${acked}`);
            assert.ok(lastSeq - firstSeq + 1 <= 300, 'retention held');
          }
        });
        const db = raw(path);
        assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
        db.close();
      }
    });

    it('two sessions × 10,000 events in interleaved batches, across a reopen, read back exactly', async () => {
      const path = tempPath('volume');
      const a = new Writer('main');
      const b = new Writer('main');
      const total = 10_000;
      let step = 0;
      const fill = async (s: Store, upTo: number) => {
        while (a.seq < upTo || b.seq < upTo) {
          step++;
          const na = Math.min(upTo - a.seq, 1 + (step % 53));
          const nb = Math.min(upTo - b.seq, 1 + ((step * 11) % 29));
          if (na > 0) await s.log.append('A', 'main', a.messages(na, 'A', T0 + step));
          if (nb > 0) await s.log.append('B', 'main', b.messages(nb, 'B', T0 + step));
        }
      };
      await withStore({ path }, async (s) => {
        await s.log.openStream('A', 'main', a.seed, REQUEST);
        await s.log.openStream('B', 'main', b.seed, REQUEST);
        await fill(s, total / 2);
      });
      await withStore({ path, durability: 'full' }, (s) => fill(s, total));
      await withStore({ path }, async (s) => {
        for (const [session, w] of [
          ['A', a],
          ['B', b],
        ] as const) {
          const got: LogEvent[] = [];
          for (let after = 0; ;) {
            const page = await s.log.read(session, 'main', after, 999);
            if (page.length === 0) break;
            got.push(...plain(page));
            after = (page[page.length - 1] as LogEvent).seq;
          }
          assert.equal(got.length, total);
          assert.deepEqual(got, w.all);
          await assertConsistent(s, session, 'main');
        }
      });
    });

    it('a replay is a range read on the batches index', async () => {
      const path = tempPath('plan');
      await withStore({ path }, async () => {});
      const db = raw(path);
      const plan = db
        .prepare(
          `EXPLAIN QUERY PLAN SELECT first_seq, last_seq, bytes, ats, sizes, chains, payloads FROM batches
        WHERE session = ? AND stream = ? AND last_seq >= ? ORDER BY last_seq`,
        )
        .all('S', 'st', 0) as Array<{ detail: string }>;
      db.close();
      assert.equal(plan.length, 1, JSON.stringify(plan));
      assert.match(plan[0]?.detail ?? '', /SEARCH batches USING INDEX batches_by_stream \(session=\? AND stream=\? AND last_seq>\?\)/);
    });
  });

  describe('schema versions', () => {
    it('a fresh file gets the latest user_version and our application_id', async () => {
      const path = tempPath('fresh');
      await withStore({ path }, async () => {});
      const db = raw(path);
      assert.equal(db.pragma('user_version', { simple: true }), SQLITE_SCHEMA_VERSION);
      assert.equal(db.pragma('application_id', { simple: true }), APPLICATION_ID);
      db.close();
      await withStore({ path }, async (s) => assert.equal(sqliteStoreInfo(s)?.schemaVersion, SQLITE_SCHEMA_VERSION));
    });

    it('a file with a newer schema version is refused, clearly, and left untouched', async () => {
      const path = tempPath('future');
      await withStore({ path }, (s) => s.sessions.create(record('kept')));
      let db = raw(path, false);
      db.pragma(`user_version = ${SQLITE_SCHEMA_VERSION + 1}`);
      db.pragma('journal_mode = DELETE');
      db.close();
      assert.throws(
        () => sqliteStore({ path }),
        (err: unknown) => {
          const m = (err as Error).message;
          return m.includes(path) && m.includes(`schema version ${SQLITE_SCHEMA_VERSION + 1}`) && /newer/.test(m) && /Upgrade mcp-continuity/.test(m);
        },
      );
      db = raw(path);
      assert.equal(db.pragma('user_version', { simple: true }), SQLITE_SCHEMA_VERSION + 1);
      assert.equal(db.pragma('journal_mode', { simple: true }), 'delete', 'not even the journal mode was written');
      assert.equal(db.prepare('SELECT count(*) FROM sessions').pluck().get(), 1);
      db.close();
    });

    it('a file that is not an mcp-continuity store is refused', () => {
      const foreign = tempPath('foreign');
      let db = new Database(foreign);
      db.exec('CREATE TABLE sessions (id TEXT)');
      db.close();
      assert.throws(() => sqliteStore({ path: foreign }), /not empty and is not an mcp-continuity store/);

      const otherApp = tempPath('other-app');
      db = new Database(otherApp);
      db.pragma('application_id = 42');
      db.close();
      assert.throws(() => sqliteStore({ path: otherApp }), /not an mcp-continuity store \(application_id 42\)/);

      const text = tempPath('text');
      writeFileSync(text, 'this is not a database, just some text that is long enough to have a header '.repeat(20));
      assert.throws(
        () => sqliteStore({ path: text }),
        (err: unknown) => (err as Error).message.startsWith(`sqliteStore: cannot open ${text}`),
      );

      assert.throws(() => sqliteStore({ path: join(DIR, 'no-such-dir', 'x.db') }), /sqliteStore: cannot open/);
    });

    it('migrate applies the missing steps in order, each setting user_version', () => {
      const db = new Database(':memory:');
      const log: string[] = [];
      const steps: Migration[] = [
        {
          version: 1,
          description: 'one',
          up: (d) => {
            log.push('1');
            d.exec('CREATE TABLE t (a)');
          },
        },
        {
          version: 2,
          description: 'two',
          up: (d) => {
            log.push('2');
            d.exec('ALTER TABLE t ADD COLUMN b');
          },
        },
      ];
      assert.deepEqual(migrate(db, steps.slice(0, 1)), { from: 0, to: 1 });
      assert.equal(db.pragma('user_version', { simple: true }), 1);
      assert.deepEqual(migrate(db, steps), { from: 1, to: 2 });
      assert.deepEqual(migrate(db, steps), { from: 2, to: 2 });
      assert.deepEqual(log, ['1', '2']);
      assert.equal(db.pragma('user_version', { simple: true }), 2);
      assert.deepEqual(
        (db.prepare('PRAGMA table_info(t)').all() as Array<{ name: string }>).map((c) => c.name),
        ['a', 'b'],
      );
      db.close();
    });

    it('a failing step rolls the whole upgrade back', () => {
      const db = new Database(':memory:');
      const steps: Migration[] = [
        { version: 1, description: 'one', up: (d) => d.exec('CREATE TABLE t (a)') },
        { version: 2, description: 'broken', up: (d) => d.exec('CREATE TABLE u (a); INSERT INTO nowhere VALUES (1)') },
      ];
      assert.throws(() => migrate(db, steps), /no such table: nowhere/);
      assert.equal(db.pragma('user_version', { simple: true }), 0);
      assert.equal(db.prepare("SELECT count(*) FROM sqlite_schema WHERE type = 'table'").pluck().get(), 0);
      assert.throws(() => migrate(db, [steps[1] as Migration]), /versions must be 1, 2, 3/);
      db.close();
    });
  });
});
