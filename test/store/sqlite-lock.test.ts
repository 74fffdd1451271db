/**
 * One process per SQLite file: a second process refuses to start with one clear line; a
 * killed holder does not block a restart; the same process may reopen after close().
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { isContinuityError } from '../../src/protocol/errors.js';
import { ProcessLock, STALE_MS, thisProcess } from '../../src/store/sqlite/lock.js';
import { sqliteStore } from '../../src/store/sqlite/index.js';
import { within } from '../helpers/wait.js';

const HOLDER = fileURLToPath(new URL('./sqlite-holder.ts', import.meta.url));
const DIR = mkdtempSync(join(tmpdir(), 'mcpc-sqlite-lock-'));
const children = new Set<ChildProcess>();
after(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(DIR, { recursive: true, force: true });
});

let n = 0;
const file = (): string => join(DIR, `lock-${++n}.db`);

interface Holder {
  child: ChildProcess;
  /** The first line it printed. */
  line: string;
}

/** Starts a holder process on `path` and returns its first line (`ready <pid>` or `error …`). */
async function hold(path: string): Promise<Holder> {
  const child = spawn(process.execPath, ['--import', 'tsx', HOLDER, path], { stdio: ['pipe', 'pipe', 'inherit'] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  const line = await within(
    new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout as NodeJS.ReadableStream }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`holder exited with ${code} before printing`)));
    }),
    'the holder process to start',
  );
  return { child, line };
}

async function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  return within(new Promise((resolve) => child.once('exit', (code) => resolve(code))), 'the process to exit');
}

async function kill9(child: ChildProcess): Promise<void> {
  const gone = exited(child);
  child.kill('SIGKILL');
  await gone;
}

const locked = (err: unknown): boolean => isContinuityError(err, 'store-locked');

describe('sqlite: one process per file', () => {
  it('a second process refuses to start, in one line naming the file, the holder and the fix', async () => {
    const path = file();
    const first = await hold(path);
    assert.match(first.line, /^ready \d+$/);
    const pid = Number(first.line.split(' ')[1]);
    const second = await hold(path);
    assert.equal(await exited(second.child), 1);
    assert.match(second.line, /^error store-locked /);
    assert.ok(second.line.includes(path), second.line);
    assert.ok(second.line.includes(`process ${pid}`), second.line);
    assert.match(second.line, /Redis store/);
    assert.doesNotMatch(second.line, /\n/);
    // And this process too.
    assert.throws(
      () => sqliteStore({ path }),
      (err: unknown) => locked(err) && (err as Error).message.includes(`process ${pid}`),
    );

    // The first one's session is intact; once it closes, the file is free.
    first.child.stdin?.end();
    assert.equal(await exited(first.child), 0);
    const store = sqliteStore({ path });
    try {
      assert.equal((await store.sessions.get(`s-${pid}`))?.id, `s-${pid}`);
    } finally {
      await store.close();
    }
  });

  it('a holder killed with -9 does not block a restart', async () => {
    const path = file();
    const first = await hold(path);
    assert.match(first.line, /^ready /);
    await kill9(first.child);
    const again = await hold(path);
    assert.match(again.line, /^ready /, again.line);
    again.child.stdin?.end();
    assert.equal(await exited(again.child), 0);
  });

  it('the same process reopens the file after close(), but cannot open it twice at once', async () => {
    const path = file();
    const a = sqliteStore({ path });
    assert.throws(
      () => sqliteStore({ path }),
      (err: unknown) => locked(err) && /already open in this process/.test((err as Error).message),
    );
    await a.sessions.create({ id: 'x', epoch: 'e', pastEpochs: [], protocolVersion: 'v', initialize: '{}', createdAt: 0, lastActiveAt: 0 });
    await a.close();
    const b = sqliteStore({ path });
    assert.equal((await b.sessions.get('x'))?.id, 'x');
    await b.close();
    await b.close(); // idempotent
    const c = sqliteStore({ path });
    await c.close();
    await sqliteStore({ path: ':memory:' }).close(); // never locked
  });

  it('a holder on another host is respected while its heartbeat is fresh, and taken over once it is stale', async () => {
    const path = file();
    await sqliteStore({ path }).close(); // create and migrate
    const db = new Database(path);
    try {
      const me = thisProcess();
      const insert = db.prepare('INSERT OR REPLACE INTO process_lock VALUES (1, ?, ?, ?, ?, ?, ?, ?)');
      insert.run(4242, 'other-host', me.pidNs, 'b', 'n1', Date.now(), Date.now());
      assert.throws(
        () => sqliteStore({ path }),
        (err: unknown) => locked(err) && /process 4242 on other-host/.test((err as Error).message),
      );
      const old = Date.now() - STALE_MS - 1_000;
      insert.run(4242, 'other-host', me.pidNs, 'b', 'n1', old, old);
      const s = sqliteStore({ path });
      await s.close();
      // A row of this host whose pid is gone is taken over at once, whatever its heartbeat.
      const dead = spawn(process.execPath, ['-e', '0']);
      await exited(dead);
      insert.run(dead.pid, me.host, me.pidNs, me.bootId, 'n2', Date.now(), Date.now());
      await sqliteStore({ path }).close();
      // A live pid of this host holds it (here: this very process, under a nonce it never issued).
      insert.run(process.pid, me.host, me.pidNs, me.bootId, 'n3', Date.now(), Date.now());
      assert.throws(() => sqliteStore({ path }), locked);
    } finally {
      db.close();
    }
  });

  it('a holder whose file was taken over notices at its next heartbeat and refuses to write', async () => {
    const path = file();
    await sqliteStore({ path }).close(); // create and migrate
    const db = new Database(path);
    try {
      const lock = ProcessLock.acquire(db, path);
      assert.equal(lock.lost, false);
      lock.heartbeat();
      assert.equal(lock.lost, false, 'a heartbeat of the holder keeps it');
      assert.throws(() => sqliteStore({ path }), locked, 'held');
      db.prepare("UPDATE process_lock SET nonce = 'another-process'").run(); // as a takeover does
      lock.heartbeat();
      assert.equal(lock.lost, true);
      assert.throws(() => lock.check(), locked);
      lock.release();
      assert.equal(db.prepare('SELECT nonce FROM process_lock').pluck().get(), 'another-process', 'release leaves the new holder alone');
    } finally {
      db.close();
    }
  });
});
