/**
 * Every file under examples/ that the README shows runs, as written: the server snippet
 * serves a tool, the client snippet calls it and exits by itself, the custom-store snippet
 * types a store with the public interfaces and runs end to end.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertBuilt, lineMatching, runToEnd, spawnExample } from './run.js';
import { freePort } from '../helpers/processes.js';

test('examples/server.ts serves its tool; examples/client.ts calls it, ends its session and exits', { timeout: 120_000 }, async () => {
  assertBuilt();
  const dir = mkdtempSync(join(tmpdir(), 'mcp-examples-'));
  const server = spawnExample('examples/server.ts', [], { cwd: dir, env: { PORT: '0', DB: join(dir, 'server.db') } });
  try {
    const [, url] = await lineMatching(server, /^listening on (http:\/\/\S+)$/, 'the example server to listen');
    const client = await runToEnd(spawnExample('examples/client.ts', [url as string], { cwd: dir }), 'the example client');
    assert.equal(client.code, 0, `client exit code; stderr: ${client.stderr}`);
    assert.match(client.stdout, /^server: my-server$/m, client.stdout);
    assert.match(client.stdout, /^tools: add$/m, client.stdout);
    assert.match(client.stdout, /^add\(2, 3\) = \[\{"type":"text","text":"5"\}\]$/m, client.stdout);
    assert.equal(existsSync(join(dir, 'client.ckpt')), false, 'terminating the session forgot the checkpoint');
    // SIGTERM: the server closes its listener and its store, and exits by itself.
    const exited = runToEnd(server, 'the example server');
    server.kill('SIGTERM');
    const { code, stderr } = await exited;
    assert.equal(code, 0, `server exit code after SIGTERM; stderr: ${stderr}`);
  } finally {
    if (server.exitCode === null && server.signalCode === null) server.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});

test('examples/custom-store.ts wraps a store through the public store types and runs to the end', { timeout: 60_000 }, async () => {
  assertBuilt();
  const dir = mkdtempSync(join(tmpdir(), 'mcp-examples-'));
  try {
    const run = await runToEnd(spawnExample('examples/custom-store.ts', [], { cwd: dir }), 'the custom-store example');
    assert.equal(run.code, 0, `exit code; stderr: ${run.stderr}`);
    const logged = /^events logged before they were sent: (\d+)$/m.exec(run.stdout);
    assert.ok(logged, run.stdout);
    // initialize's response, the tool call's priming event and its response at least.
    assert.ok(Number(logged[1]) >= 3, `events were logged: ${logged[1]}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('examples/auth.ts: its HMAC verifier admits its own tokens, refuses forged ones, and binds sessions to the user', { timeout: 120_000 }, async () => {
  assertBuilt();
  const dir = mkdtempSync(join(tmpdir(), 'mcp-examples-'));
  // A real port: the example's Host guard names it (loopbackGuard(port)).
  const env = { PORT: String(await freePort()), TOKEN_SECRET: 'x'.repeat(16) + 'example-secret-for-the-test' };
  const server = spawnExample('examples/auth.ts', [], { cwd: dir, env });
  try {
    const [, url] = await lineMatching(server, /^MCP endpoint at (http:\/\/\S+)$/, 'the auth example to listen');
    const token = async (user: string): Promise<string> =>
      (await runToEnd(spawnExample('examples/auth.ts', ['--issue', user], { cwd: dir, env }), 'issuing a token')).stdout.trim();
    const [alice, bob] = [await token('alice'), await token('bob')];
    const post = (body: unknown, bearer?: string, session?: string): Promise<Response> =>
      fetch(url as string, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-11-25',
          ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
          ...(session ? { 'mcp-session-id': session } : {}),
        },
        body: JSON.stringify(body),
      });
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    };
    assert.equal((await post(init)).status, 401, 'no token');
    const [payload, mac] = alice.split('.') as [string, string];
    const forged = `${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), sub: 'root' })).toString('base64url')}.${mac}`;
    assert.equal((await post(init, forged)).status, 401, 'altered claims, same MAC');
    const ok = await post(init, alice);
    assert.equal(ok.status, 200);
    await ok.text();
    const session = ok.headers.get('mcp-session-id') ?? '';
    await (await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, alice, session)).text();
    const call = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'whoami', arguments: {} } };
    assert.match(await (await post(call, alice, session)).text(), /"text":"alice"/);
    assert.equal((await post(call, bob, session)).status, 404, "alice's session under bob's token is unknown");
  } finally {
    server.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});
