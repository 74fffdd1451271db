/**
 * `serve` startup failures, with real processes: each prints one line naming the problem
 * and the fix, exits non-zero, prints no stack, and leaves no database file behind.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { runCli, startCli, stop } from './run-cli.js';

function oneLine(stderr: string): string {
  const lines = stderr.trim().split('\n');
  assert.equal(lines.length, 1, `one line expected, got:\n${stderr}`);
  assert.doesNotMatch(stderr, /\n\s+at /, 'no stack trace');
  return lines[0] ?? '';
}

test('a busy port: one line, exit 1, and the default SQLite file was not created', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'mcpc-busy-'));
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    holder.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const { port } = holder.address() as AddressInfo;
  const r = await runCli(['serve', '--port', String(port)], { cwd: dir });
  assert.equal(r.code, 1);
  assert.match(oneLine(r.stderr), new RegExp(`port ${port} .*already in use.*--port`));
  assert.deepEqual(readdirSync(dir), [], 'no database file created');
});

test('SQLite path problems: missing directory, a directory, a non-database file, a read-only file', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'mcpc-sqlite-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const cases: [string, string, RegExp][] = [
    ['missing directory', join(dir, 'nope', 'x.db'), /does not exist; create it/],
    ['a directory', dir, /is a directory/],
    ['not a database', join(dir, 'notes.txt'), /not an SQLite database/],
  ];
  writeFileSync(join(dir, 'notes.txt'), 'hello, not a database\n');
  for (const [label, path, expected] of cases) {
    const r = await runCli(['serve', '--port', '0', '--store', `sqlite:${path}`]);
    assert.equal(r.code, 1, label);
    assert.match(oneLine(r.stderr), expected, label);
    assert.match(r.stderr, /--store/, `${label}: names the fix`);
  }
  assert.equal(existsSync(join(dir, 'nope')), false);
});

test('a read-only SQLite file fails at startup instead of serving 503s', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'mcpc-ro-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'ro.db');
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE t(x)');
  db.close();
  chmodSync(path, 0o444);
  chmodSync(dir, 0o777);
  // A superuser writes through file modes: run the server as root without the capabilities
  // that override them (the file is root's own and 0444), as a real user would be. Running
  // it as another user instead would depend on every folder above the checkout being open.
  const asUser = process.getuid?.() === 0 ? { wrapper: ['setpriv', '--bounding-set', '-dac_override,-dac_read_search,-fowner', '--'] } : {};
  const r = await runCli(['serve', '--port', '0', '--store', `sqlite:${path}`], asUser);
  assert.equal(r.code, 1, r.stderr + r.stdout);
  assert.match(oneLine(r.stderr), /read-only; make it writable/);
});

test('flags: --port "" is an error, --version prints it, unknown flags and stores hint at usage, serve --help shows every flag', async () => {
  const empty = await runCli(['serve', '--port', '']);
  assert.equal(empty.code, 2);
  assert.match(oneLine(empty.stderr), /--port must be an integer/);
  const version = await runCli(['--version']);
  assert.equal(version.code, 0);
  assert.match(version.stdout.trim(), /^\d+\.\d+\.\d+/);
  const unknown = await runCli(['serve', '--frobnicate']);
  assert.equal(unknown.code, 2);
  assert.match(oneLine(unknown.stderr), /unknown option '--frobnicate'.*mcp-continuity serve --help/);
  const store = await runCli(['serve', '--store', 'postgres://x']);
  assert.equal(store.code, 2);
  assert.match(oneLine(store.stderr), /Unknown store "postgres:\/\/x": expected memory, sqlite:PATH, redis:\/\/HOST:PORT.*redis-cluster:\/\//);
  const command = await runCli(['frobnicate']);
  assert.equal(command.code, 2);
  assert.match(oneLine(command.stderr), /unknown command.*mcp-continuity --help/);
  const help = await runCli(['serve', '--help']);
  assert.equal(help.code, 0);
  for (const flag of ['--websocket', '--quiet', '--allowed-hosts', '--store', '--port'])
    assert.match(help.stdout.split('\n\n')[0] ?? '', new RegExp(flag), `synopsis has ${flag}`);
  for (const cmd of ['probe', 'chaos', 'demo']) {
    const h = await runCli([cmd, '--help']);
    assert.equal(h.code, 0, cmd);
    assert.match(h.stdout, new RegExp(`^Usage: mcp-continuity ${cmd}`), cmd);
  }
});

test('banner: version, a curl line and the Inspector command; --allowed-hosts admits a proxied Host and is named in the 403', async (t) => {
  const { child, line, output } = await startCli(['serve', '--port', '0', '--store', 'memory', '--allowed-hosts', 'devbox.internal:8080']);
  t.after(() => stop(child));
  const url = new URL(/at (http:\S+)/.exec(line)?.[1] ?? '');
  assert.match(line, /^mcp-continuity \d+\.\d+\.\d+ serving/);
  const init = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
  });
  const post = async (host: string): Promise<{ status: number; body: string }> => {
    const { request } = await import('node:http');
    return new Promise((resolve, reject) => {
      const req = request(
        url,
        { method: 'POST', headers: { host, 'content-type': 'application/json', accept: 'application/json, text/event-stream' } },
        (res) => {
          let body = '';
          res.setEncoding('utf8').on('data', (c: string) => {
            body += c;
            if (res.statusCode === 200) res.destroy();
          });
          res.on('close', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.end(init);
    });
  };
  assert.equal((await post('devbox.internal:8080')).status, 200, 'the allowed proxied Host is accepted');
  const refused = await post('other.internal:8080');
  assert.equal(refused.status, 403);
  assert.match(refused.body, /--allowed-hosts/);
  const banner = output();
  assert.match(banner, /curl -sN http:\/\/127\.0\.0\.1:\d+\/mcp/);
  assert.match(banner, /npx @modelcontextprotocol\/inspector/);
});

test('a second serve on the same SQLite file refuses to start in one line; the first keeps serving its sessions', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'mcpc-two-'));
  const path = join(dir, 'shared.db');
  const first = await startCli(['serve', '--port', '0', '--quiet', '--store', `sqlite:${path}`]);
  t.after(async () => {
    await stop(first.child);
    rmSync(dir, { recursive: true, force: true });
  });
  const url = first.line.trim();
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const init = await fetch(url, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    }),
  });
  assert.equal(init.status, 200);
  const session = init.headers.get('mcp-session-id') ?? '';
  await init.body?.cancel();

  const second = await runCli(['serve', '--port', '0', '--store', `sqlite:${path}`]);
  assert.equal(second.code, 1);
  assert.match(oneLine(second.stderr), new RegExp(`in use by process ${first.child.pid}.*Redis`));

  // The first process's session was not touched: it still answers on it.
  const list = await fetch(url, {
    method: 'POST',
    headers: { ...headers, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
  });
  assert.equal(list.status, 200);
  assert.match(await list.text(), /"tools"/);
});
