/**
 * A restarted client process resumes from its checkpoint file: the session, its epoch
 * and the standalone stream's position survive, the SDK `Client` skips initialize, and
 * what the server sent while the client was down arrives exactly once.
 * Also: the official SDK v2 `Client` works on our transport.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { ContinuityClientTransport, fileCheckpoint, type DivergenceReport } from '../../src/client/index.js';
import { startFixture } from '../helpers/fixture.js';
import { initialize, rpc, send, sessionHeaders } from '../helpers/sse-client.js';
import { createStreamServer } from '../helpers/stream-server.js';
import { waitFor } from '../helpers/wait.js';

test('a restarted client resumes its session and standalone stream from the checkpoint file', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-client-restart-'));
  const path = join(dir, 'client.ckpt');
  const f = await startFixture({ server: () => createStreamServer(), keepAliveMs: 0, retryMs: 20 });
  const reports: DivergenceReport[] = [];
  const seen: number[] = [];
  const connect = async () => {
    const transport = new ContinuityClientTransport(f.url, {
      checkpoint: fileCheckpoint(path),
      checkpointIntervalMs: 10,
      onDivergence: (r) => reports.push(r),
    });
    const client = new Client({ name: 'restarting', version: '1.0.0' });
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      const seq = (n.params.data as { seq?: number } | undefined)?.seq;
      if (typeof seq === 'number') seen.push(seq);
    });
    await client.connect(transport);
    return { transport, client };
  };
  try {
    // First life: broadcast 5 unrelated notifications; they arrive on the standalone stream.
    const first = await connect();
    const sessionId = first.transport.sessionId as string;
    await first.client.callTool({ name: 'broadcast', arguments: { count: 5 } });
    await waitFor(() => seen.length === 5, 'the first five');
    // The checkpoint file has caught up with the standalone stream's last logged event.
    const checkpoint = fileCheckpoint(path);
    await waitFor(async () => {
      const head = await f.endpoint.store.log.head(sessionId, '0');
      const saved = await checkpoint.load();
      const standalone = saved?.standalone === undefined ? undefined : saved.streams[saved.standalone];
      return head !== undefined && head.lastSeq > 0 && standalone?.seq === head.lastSeq;
    }, "the checkpoint to record the standalone stream's last event");
    await first.client.close(); // the process "exits": the session stays on the server
    assert.ok(existsSync(path), 'the checkpoint file was written');

    // While the client is down, the server sends five more on the standalone stream.
    const raw = await initialize(f.url); // an unrelated session, only to prove isolation
    await send(f.url, { body: rpc('tools/call', { name: 'broadcast', arguments: { count: 2 } }), headers: sessionHeaders(raw) });
    const serverSide = f.endpoint; // broadcast into the first session through a fresh call on it:
    const headers = { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' };
    const sent = await send(f.url, { body: rpc('tools/call', { name: 'broadcast', arguments: { count: 5 } }), headers });
    assert.equal(sent.status, 200, 'the session is still alive on the server');
    assert.ok(serverSide.sessionCount >= 1, 'server holds the session');

    // Second life: same checkpoint file, no initialize, the missed five arrive once.
    const second = await connect();
    assert.equal(second.transport.sessionId, sessionId, 'the same session resumed');
    await waitFor(() => seen.length === 10, 'the five sent while down');
    assert.deepEqual(seen, [1, 2, 3, 4, 5, 1, 2, 3, 4, 5], 'each broadcast once, in order, none from the other session');
    const result = await second.client.callTool({ name: 'broadcast', arguments: { count: 0 } });
    assert.ok(result, 'calls work on the resumed session');
    assert.deepEqual(reports, [], 'no divergence');
    await second.transport.terminateSession();
    assert.ok(!existsSync(path), 'terminating the session forgets the checkpoint');
    await second.client.close();
  } finally {
    await f.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a separate client process, killed and started again, resumes from its checkpoint file', async () => {
  const { spawn } = await import('node:child_process');
  const { fileURLToPath } = await import('node:url');
  const script = fileURLToPath(new URL('../helpers/child-client.ts', import.meta.url));
  const dir = mkdtempSync(join(tmpdir(), 'mcp-client-process-'));
  const path = join(dir, 'client.ckpt');
  const f = await startFixture({ server: () => createStreamServer(), keepAliveMs: 0, retryMs: 20 });
  const run = (expect: number, onLine?: (line: string) => void): Promise<string[]> =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', script, f.url.href, path, String(expect)], { stdio: ['ignore', 'pipe', 'inherit'] });
      const lines: string[] = [];
      let buffered = '';
      child.stdout.on('data', (chunk: Buffer) => {
        buffered += chunk.toString();
        for (let i = buffered.indexOf('\n'); i >= 0; i = buffered.indexOf('\n')) {
          const line = buffered.slice(0, i);
          buffered = buffered.slice(i + 1);
          lines.push(line);
          onLine?.(line);
        }
      });
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      child.once('exit', (code) => {
        clearTimeout(timer);
        if (code === 0) resolve(lines);
        else reject(new Error(`child client exited ${code}: ${lines.join(' | ')}`));
      });
    });
  try {
    // First process: connect, then the server broadcasts 3 on its session; it exits after them.
    let sessionId = '';
    const first = await run(3, (line) => {
      if (line.startsWith('connected ')) {
        sessionId = line.slice('connected '.length);
        const headers = { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' };
        void send(f.url, { body: rpc('tools/call', { name: 'broadcast', arguments: { count: 3, intervalMs: 20 } }), headers });
      }
    });
    assert.deepEqual(
      first.filter((l) => l.startsWith('seq')).map((l) => l.split(' ')[1]),
      ['1', '2', '3'],
      'first process got 1..3',
    );
    // While no client process runs, three more are sent on the same session.
    const headers = { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' };
    assert.equal((await send(f.url, { body: rpc('tools/call', { name: 'broadcast', arguments: { count: 3 } }), headers })).status, 200, 'session alive');
    // Second process, same checkpoint file: the same session, and exactly the missed three.
    const second = await run(3);
    assert.equal(second[0], `connected ${sessionId}`, 'resumed the same session without initialize');
    assert.deepEqual(
      second.filter((l) => l.startsWith('seq')),
      ['1', '2', '3'].map((n) => `seq ${n} session ${sessionId}`),
      'the missed three, once each',
    );
    assert.ok(!second.some((l) => l.startsWith('divergence')), 'no divergence');
  } finally {
    await f.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the official SDK v2 Client on our transport: tools, progress', async () => {
  const f = await startFixture();
  const transport = new ContinuityClientTransport(f.url);
  const client = new ClientV2({ name: 'v2-on-continuity', version: '1.0.0' });
  try {
    await client.connect(transport);
    const progress: number[] = [];
    const result = await client.callTool({ name: 'emit', arguments: { count: 7 } }, { onprogress: (p: { progress: number }) => progress.push(p.progress) });
    assert.deepEqual(result.structuredContent, { emitted: 7 }, 'result');
    assert.deepEqual(progress, [1, 2, 3, 4, 5, 6, 7], 'progress');
  } finally {
    await client.close();
    await f.close();
  }
});
