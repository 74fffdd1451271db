/**
 * kill -9 a child server mid-stream at seeded points and restart it on the same port.
 * On SQLite the session survives: our client resumes each time with nothing lost,
 * duplicated or reordered, and the request that was in flight fails fast with
 * request-abandoned. On the memory store the session is gone: 404, a reported
 * re-initialization, never a silent continuation.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { ContinuityClientTransport, type DivergenceReport } from '../../src/client/index.js';
import { sqliteStore } from '../../src/store/sqlite/index.js';
import { freePort, kill9, startChild, type ChildServer } from '../helpers/processes.js';
import { prng } from '../helpers/stream-server.js';
import { waitFor } from '../helpers/wait.js';

const SEED = Number(process.env.KILL_SEED ?? 4242);

interface Harness {
  client: Client;
  transport: ContinuityClientTransport;
  alarms: DivergenceReport[];
  seqs: number[];
}

async function connect(url: URL): Promise<Harness> {
  const alarms: DivergenceReport[] = [];
  const transport = new ContinuityClientTransport(url, {
    // Keep trying while the child restarts (slow under load), at most 150 ms apart.
    reconnect: { initialDelayMs: 20, maxDelayMs: 150, maxRequestAttempts: 400 },
    onDivergence: (r) => alarms.push(r),
  });
  const client = new Client({ name: 'kill-test', version: '1.0.0' });
  const h: Harness = { client, transport, alarms, seqs: [] };
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    const data = n.params.data as { seq?: number } | undefined;
    if (n.params.logger === 'emit' && typeof data?.seq === 'number') h.seqs.push(data.seq);
  });
  await client.connect(transport);
  return h;
}

/** A long emit call, killed `delayMs` in; returns how it ended and when, relative to the restart. */
async function killDuringCall(h: Harness, server: ChildServer, port: number, store: string, delayMs: number) {
  h.seqs = [];
  const call = h.client.callTool({ name: 'emit', arguments: { count: 2000, intervalMs: 2 } }, undefined, { timeout: 20_000 }).then(
    (result) => ({ ok: true as const, result, at: Date.now() }),
    (error: { code?: unknown; data?: { reason?: string } }) => ({ ok: false as const, error, at: Date.now() }),
  );
  await new Promise((r) => setTimeout(r, delayMs));
  await kill9(server);
  const next = await startChild(port, store);
  const outcome = await call;
  return { next, outcome, seqs: [...h.seqs] };
}

/** The error table code of a failed call: `data.reason` of an McpError, or `code` of a ContinuityError. */
function reasonOf(error: { code?: unknown; data?: { reason?: string } }): string | undefined {
  return error.data?.reason ?? (typeof error.code === 'string' ? error.code : undefined);
}

/**
 * Did the call fail before any event reached the client (nothing to resume from)? The client
 * then fails it itself, `request-abandoned` (it may have run), and never sends it again.
 */
function early(error: { code?: unknown; message?: unknown; data?: { reason?: string } }): boolean {
  return reasonOf(error) === 'request-abandoned' && /before any resumable event|failed before an answer/.test(String(error.message));
}

function assertContiguous(seqs: number[], context: string): void {
  seqs.forEach((s, i) => assert.equal(s, i + 1, `${context}: delivered #${i} is seq ${s}`));
}

describe('kill -9 and restart', () => {
  test(`SQLite: 20 seeded kills, the client resumes each time (seed ${SEED})`, { timeout: 120_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcp-kill-'));
    const file = join(dir, 'kill.db');
    const store = `sqlite:${file}`;
    const port = await freePort();
    let server = await startChild(port, store);
    const h = await connect(server.url);
    const rand = prng(SEED);
    const delivered: number[] = [];
    let abandoned = 0;
    try {
      for (let i = 0; i < 20; i++) {
        const delay = 30 + Math.floor(rand() * 400);
        const { next, outcome, seqs } = await killDuringCall(h, server, port, store, delay);
        server = next;
        const context = `kill ${i} at ${delay} ms (seed ${SEED})`;
        assert.equal(outcome.ok, false, `${context}: the call cannot have completed`);
        if (!outcome.ok && early(outcome.error)) {
          // Killed before the call's first event reached the client: nothing to resume from,
          // and nothing delivered; the call fails fast, typed, and is not sent again.
          assert.equal(seqs.length, 0, `${context}: failed early only before any event`);
        } else if (!outcome.ok) {
          assert.equal(reasonOf(outcome.error), 'request-abandoned', `${context}: ${JSON.stringify(outcome.error)}`);
          abandoned++;
        }
        assertContiguous(seqs, context);
        if (!outcome.ok && !early(outcome.error) && reasonOf(outcome.error) === 'request-abandoned') delivered.push(seqs.length);
        // The same session goes on: a new call succeeds without re-initialization.
        const check = await h.client.callTool({ name: 'emit', arguments: { count: 3 } });
        assert.deepEqual(check.structuredContent, { emitted: 3 }, `${context}: next call`);
      }
      assert.deepEqual(
        h.alarms.map((a) => a.code),
        [],
        `no divergence on a durable store (seed ${SEED})`,
      );
      console.log(`# ${abandoned} of 20 kills landed mid-stream (request-abandoned); the rest before the first event (failed early, request-abandoned)`);
      assert.ok(abandoned >= 15, `most kills land mid-stream: ${abandoned} of 20 (seed ${SEED})`);
    } finally {
      await h.client.close();
      await kill9(server);
    }
    // Nothing lost: every event the log holds for each killed call reached the client.
    const db = sqliteStore({ path: file });
    try {
      const sessionId = h.transport.sessionId as string;
      const stored: number[] = [];
      for (const name of await db.log.streams(sessionId)) {
        const events = await db.log.read(sessionId, name, 0, 100_000);
        const last = events.at(-1)?.payload ?? '';
        if (!last.includes('request-abandoned')) continue;
        stored.push(events.filter((e) => e.payload.includes('"logger":"emit"')).length);
      }
      assert.deepEqual(stored, delivered, `stored vs delivered notifications per killed call (seed ${SEED})`);
    } finally {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test(`memory store: every kill yields 404 session-not-found and a reported re-initialization (seed ${SEED})`, { timeout: 60_000 }, async () => {
    const port = await freePort();
    let server = await startChild(port, 'memory');
    const h = await connect(server.url);
    const rand = prng(SEED + 1);
    try {
      for (let i = 0; i < 5; i++) {
        const before = h.transport.sessionId;
        const reportsBefore = h.alarms.length;
        const delay = 30 + Math.floor(rand() * 300);
        const { next, outcome, seqs } = await killDuringCall(h, server, port, 'memory', delay);
        server = next;
        const context = `kill ${i} at ${delay} ms`;
        assert.equal(outcome.ok, false, `${context}: the call cannot have completed`);
        if (!outcome.ok && early(outcome.error)) assert.equal(seqs.length, 0, `${context}: failed early only before any event`);
        else if (!outcome.ok) assert.equal(reasonOf(outcome.error), 'session-not-found', `${context}: ${JSON.stringify(outcome.error)}`);
        assertContiguous(seqs, context);
        // The call fails first; the report follows once the re-initialization is done.
        const report = await waitFor(() => (h.alarms.length > reportsBefore ? h.alarms.at(-1) : undefined), `${context}: the divergence report`);
        assert.ok(report, `${context}: the application was told`);
        assert.equal(report.code, 'session-not-found', `${context}: the server's reason is reported`);
        assert.notEqual(report.sessionId, before, `${context}: a new session`);
        const check = await h.client.callTool({ name: 'emit', arguments: { count: 3 } });
        assert.deepEqual(check.structuredContent, { emitted: 3 }, `${context}: next call`);
      }
      // A restart while nothing is in flight: the next call's POST gets 404, the client
      // re-initializes and sends it again (the server never ran it), and says so.
      // The call races the standalone stream, which may hear of the loss first: either
      // way the call runs exactly once, on the new session. Five rounds.
      for (let round = 0; round < 5; round++) {
        await kill9(server);
        server = await startChild(port, 'memory');
        const count = h.alarms.length;
        const result = await h.client.callTool({ name: 'emit', arguments: { count: 2 } });
        assert.deepEqual(result.structuredContent, { emitted: 2 }, `round ${round}: the next call succeeds`);
        const report = await waitFor(() => (h.alarms.length > count ? h.alarms.at(-1) : undefined), `round ${round}: the divergence report`);
        assert.ok(report, `round ${round}: the application was told`);
        assert.ok(['session-not-found', 'session-invalid'].includes(report.code), `round ${round}: ${report.code}`);
      }
    } finally {
      await h.client.close();
      await kill9(server);
    }
  });
});
