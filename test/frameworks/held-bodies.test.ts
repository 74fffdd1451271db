/**
 * Held bodies behind the Express example's recommended mount (the MCP route without
 * `express.json()`): 150 connections each sending a 4 MB body one byte short. The endpoint
 * reads the bodies itself, so the process-wide bound (limits.maxBodyBytesTotal, 128 MiB)
 * holds: the rest get 503 server-busy, and RSS stays within what `serve` holds. With
 * `express.json()` in front, the same load took the example from 117 MB to 732 MB.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../helpers/processes.js';
import { waitFor } from '../helpers/wait.js';
import { assertBuilt, lineMatching, spawnExample } from '../examples/run.js';

const CONNECTIONS = 150;
const BODY = 4_000_000;
const MIB = 1024 * 1024;

function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

function paddedInitialize(bytes: number): string {
  const base = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'held', version: '0' }, pad: '' },
  });
  return base.replace('"pad":""', `"pad":"${'x'.repeat(bytes - base.length)}"`);
}

test('150 held 4 MB bodies against the Express example: 503 server-busy past the bound, RSS within it', { timeout: 180_000 }, async (t) => {
  assertBuilt();
  const dir = mkdtempSync(join(tmpdir(), 'mcp-held-'));
  const port = await freePort();
  const server = spawnExample('examples/express.ts', [], { cwd: dir, env: { PORT: String(port) } });
  const sockets: Socket[] = [];
  let sampler: ReturnType<typeof setInterval> | undefined;
  try {
    await lineMatching(server, /^MCP endpoint at /, 'the Express example to listen');
    const pid = server.pid as number;
    const baseline = rssOf(pid);
    let peak = baseline;
    sampler = setInterval(() => (peak = Math.max(peak, rssOf(pid))), 20);
    const body = paddedInitialize(BODY);
    const statuses: number[] = [];
    // Connections that ended without an answer: a refusal the client never got to read.
    const unanswered: string[] = [];
    for (let i = 0; i < CONNECTIONS; i++) {
      const socket = connect(port, '127.0.0.1');
      let error = '';
      socket.on('error', (e: NodeJS.ErrnoException) => (error ||= e.code ?? e.message));
      let head = '';
      let answered = false;
      socket.on('data', (chunk: Buffer) => {
        if (head.length > 20) return;
        head += chunk.toString('latin1');
        const m = /^HTTP\/1\.1 (\d{3})/.exec(head);
        if (m && !answered) {
          answered = true;
          statuses.push(Number(m[1]));
        }
      });
      socket.on('close', () => {
        if (!answered) unanswered.push(error || 'closed');
      });
      socket.write(
        `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n` +
          `Content-Length: ${BODY}\r\n\r\n${body.slice(0, -1)}`,
      );
      sockets.push(socket);
    }
    // About 33 bodies of 4 MB fit in 128 MiB (partly received ones share it); the others
    // are refused as their bytes arrive. A third of them refused shows the bound at work.
    await waitFor(
      () => statuses.length >= CONNECTIONS / 3,
      () => `refusals for the bodies past the bound (${statuses.length} answers so far; ${unanswered.length} closed unanswered: ${unanswered.join(',')})`,
      150_000,
    );
    clearInterval(sampler);
    peak = Math.max(peak, rssOf(pid));
    t.diagnostic(
      `RSS ${(baseline / MIB).toFixed(0)} MB before, peak ${(peak / MIB).toFixed(0)} MB with ${CONNECTIONS} held bodies; ${statuses.filter((s) => s === 503).length} answered 503`,
    );
    assert.deepEqual(unanswered, [], 'every connection the server ended carried its answer');
    assert.ok(
      statuses.every((s) => s === 503),
      `every answer is 503 server-busy: ${statuses.join(',')}`,
    );
    // serve holds 128 MiB of bodies plus its own overhead (244 MB measured for this load).
    assert.ok(peak - baseline < 128 * MIB + 96 * MIB, `RSS grew by ${((peak - baseline) / MIB).toFixed(0)} MB`);
  } finally {
    // Also on a failure: a live interval would keep this file's process from ever exiting.
    clearInterval(sampler);
    for (const s of sockets) s.destroy();
    server.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});
