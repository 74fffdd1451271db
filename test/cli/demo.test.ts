/** `npx mcp-continuity demo` from the built package prints the comparison (it takes about 35 s on a quiet machine). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, collect } from './run-cli.js';

test('npx mcp-continuity demo prints both clients through a cut and a kill -9', { timeout: 180_000 }, async () => {
  if (!existsSync(join(ROOT, 'dist/cli/main.js'))) execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'ignore' });
  const child = spawn('npx', ['--no-install', 'mcp-continuity', 'demo', '--no-color'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const r = await collect(child, 120_000);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /1\. the proxy resets every response/);
  assert.match(r.stdout, /2\. kill -9 of the server/);
  assert.match(r.stdout, /3\. the official SDK server \(InMemoryEventStore\)/);
  for (const client of ['mcp-continuity', 'official SDK'])
    assert.equal(r.stdout.split('\n').filter((l) => new RegExp(`^  ${client}\\s+\\d+`).test(l)).length, 3, `${client}: one row per scenario`);
  // Our client never completes a call with damaged events; it reports a divergence instead.
  assert.match(r.stdout, /completed with lost, duplicated or reordered events: mcp-continuity 0 of 3, official SDK [1-3] of 3;/);
  assert.match(r.stdout, /^ {2}mcp-continuity .*undetectable in \d+ ms .*opaque event IDs after a resume prove nothing/m);
  assert.match(r.stdout, /lost\s+dup\s+reord/);
});
