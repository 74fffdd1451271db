/**
 * Checkpoint restore in a new process (issue 21, acceptance 5): a client process writes its
 * checkpoint and is killed with SIGKILL in the middle of a call; this process restores from
 * the file with the SDK `Client`. The `Client` sees the server's capabilities, version and
 * instructions as the first process did, without a new initialize reaching the server, and
 * the transport lists the call that was in flight.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { ContinuityClientTransport, fileCheckpoint } from '../../src/client/index.js';
import { startFixture } from '../helpers/fixture.js';
import { waitFor } from '../helpers/wait.js';

const script = fileURLToPath(new URL('../helpers/child-checkpoint-client.ts', import.meta.url));

test('after a restore in a new process the SDK Client sees the server as before, and the call in flight is listed', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-client-restore-'));
  const path = join(dir, 'client.ckpt');
  let initializes = 0;
  let holds = 0;
  const f = await startFixture({
    keepAliveMs: 0,
    server: () => {
      const mcp = new McpServer(
        { name: 'restore-test', version: '3.1.4', title: 'Restore test' },
        { capabilities: { logging: {}, resources: { subscribe: true } }, instructions: 'Call hold; it never returns.' },
      );
      mcp.server.oninitialized = () => void initializes++;
      mcp.registerTool('hold', { inputSchema: { label: z.string() } }, () => {
        holds++;
        return new Promise(() => {}); // in flight until the process that called it dies
      });
      mcp.registerTool('echo', { inputSchema: { text: z.string() } }, ({ text }) => ({ content: [{ type: 'text', text }] }));
      return mcp;
    },
  });
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', script, f.url.href, path], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    let before: unknown;
    let calling = false;
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line.startsWith('server ')) before = JSON.parse(line.slice('server '.length));
      if (line === 'calling') calling = true;
    });
    // Killed once the server runs the call and the checkpoint file lists it.
    await waitFor(() => calling && holds === 1, 'the child to be in the middle of its call', 120_000);
    const store = fileCheckpoint(path);
    await waitFor(async () => (await store.load())?.inFlight?.some((r) => r.method === 'tools/call'), 'the checkpoint to list the call', 120_000);
    child.kill('SIGKILL');
    await exited;
    assert.equal(initializes, 1, 'the first process initialized once');
    assert.ok(before !== undefined && (before as { capabilities?: unknown }).capabilities !== undefined, 'the first process saw capabilities');

    const transport = new ContinuityClientTransport(f.url, { checkpoint: fileCheckpoint(path) });
    const client = new Client({ name: 'checkpointing-client', version: '1.0.0' });
    await client.connect(transport);
    try {
      const after = { capabilities: client.getServerCapabilities(), version: client.getServerVersion(), instructions: client.getInstructions() };
      assert.deepEqual(after, before, 'capabilities, version and instructions as the first process saw them');
      assert.equal(after.instructions, 'Call hold; it never returns.');
      const unfinished = transport.unfinishedRequests;
      assert.equal(unfinished.length, 1, JSON.stringify(unfinished));
      assert.equal(unfinished[0]?.method, 'tools/call');
      assert.deepEqual(unfinished[0]?.params, { name: 'hold', arguments: { label: 'unfinished-call' } });
      assert.ok(typeof unfinished[0]?.sentAt === 'number' && unfinished[0].sentAt <= Date.now());
      // The same session goes on, and nothing of the call was sent again.
      const echoed = await client.callTool({ name: 'echo', arguments: { text: 'still here' } });
      assert.deepEqual(echoed.content, [{ type: 'text', text: 'still here' }]);
      assert.equal(initializes, 1, 'the restored Client did not initialize on the server');
      assert.equal(holds, 1, 'the unfinished call was not sent again');
      assert.equal(f.endpoint.sessionCount, 1, 'one session');
      // Once answered, a call leaves the list the next checkpoint holds.
      await waitFor(async () => (await store.load())?.inFlight === undefined, 'the checkpoint to hold no request in flight');
    } finally {
      await transport.terminateSession();
      await client.close();
    }
  } finally {
    await f.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
