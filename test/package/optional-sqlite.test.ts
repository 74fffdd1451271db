/**
 * better-sqlite3 is optional: without it, everything but the SQLite store loads, and the
 * SQLite store (also `serve`'s default) fails with the one line that says how to install it.
 * "Without it" is a preload that makes its resolution fail as after `--omit=optional`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const PRELOAD = fileURLToPath(new URL('./fixtures/no-better-sqlite3.cjs', import.meta.url));
const TSX = import.meta.resolve('tsx');
const LINE = /The SQLite store needs better-sqlite3 \(an optional dependency\), which is not installed: npm install better-sqlite3@12/;

function node(args: string[], cwd: string): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--require', PRELOAD, '--import', TSX, ...args], { cwd, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('serve on its default SQLite store, without better-sqlite3: exit 1 and one line naming the install', { timeout: 90_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-nosqlite-'));
  try {
    const r = node([join(root, 'src/cli/main.ts'), 'serve', '--port', '0'], dir);
    assert.equal(r.status, 1, r.stderr);
    assert.equal(r.stderr.trim().split('\n').length, 1, `one line: ${r.stderr}`);
    assert.match(r.stderr, LINE);
    assert.match(r.stderr, /^mcp-continuity: /);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('sqliteStore() without better-sqlite3 throws dependency-missing; the other entry points load', { timeout: 90_000 }, () => {
  const script = `
    const { sqliteStore } = await import(${JSON.stringify(join(root, 'src/store/sqlite/index.ts'))});
    await import(${JSON.stringify(join(root, 'src/server/index.ts'))});
    await import(${JSON.stringify(join(root, 'src/client/index.ts'))});
    await import(${JSON.stringify(join(root, 'src/store/memory/index.ts'))});
    try { sqliteStore({ path: ':memory:' }); console.log('opened'); } catch (e) { console.log(e.code + ' ' + e.message); }
  `;
  const r = node(['--input-type=module', '-e', script], root);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^dependency-missing /);
  assert.match(r.stdout, LINE);
});
