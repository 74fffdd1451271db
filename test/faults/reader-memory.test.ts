/**
 * Readers that never read must not hold unbounded server memory (a resume used to write a
 * whole replay page — here about 6 MB — in one go, and a cut or taken-over reader kept its
 * queued bytes while its socket stayed open). N raw sockets resume a large stream and never
 * read; the server process's peak RSS must stay under a documented bound, and it must still
 * answer a `tools/list`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { initialize, rpc, send, sessionHeaders } from '../helpers/sse-client.js';
import { within } from '../helpers/wait.js';
import { openIdleReader, type IdleReader } from './idle-readers.js';
import { MiB, memoryOf, startServerProcess } from './process.js';

const READERS = 48;
const EVENTS = 200;
const PAD = 32 * 1024;
/** Peak RSS growth allowed for READERS idle readers: a few page-sized buffers each, not the stream. */
const BOUND = 64 * MiB;

test(`${READERS} resumes that never read keep server RSS growth under ${BOUND / MiB} MiB`, async () => {
  const server = await startServerProcess({ limits: { maxReadersPerSession: 64 } });
  const readers: IdleReader[] = [];
  try {
    const h = await initialize(server.url);
    const emitted = await send(server.url, {
      body: rpc('tools/call', { name: 'emit', arguments: { count: EVENTS, bytes: PAD } }),
      headers: sessionHeaders(h),
      timeoutMs: 30_000,
    });
    assert.equal(emitted.status, 200);
    const cursor = emitted.events.find((e) => e.id)?.id;
    assert.ok(cursor, 'the stream has a resumable event');
    const pid = server.child.pid as number;
    const before = memoryOf(pid).rss;

    for (let i = 0; i < READERS; i++) readers.push(openIdleReader(server.url, { ...sessionHeaders(h), 'last-event-id': cursor }));
    const firsts = await within(Promise.all(readers.map((r) => r.firstBytes)), 'every idle reader got its response', 30_000);
    for (const f of firsts) assert.match(f, /^HTTP\/1\.1 200/);

    // The server still answers promptly-enough (a deadlock-only bound) while they sit there.
    const list = await within(send(server.url, { body: rpc('tools/list'), headers: sessionHeaders(h) }), 'tools/list', 20_000);
    assert.equal(list.status, 200);

    const { peak } = memoryOf(pid);
    const growth = peak - before;
    process.stdout.write(`# ${READERS} idle readers of a ${((EVENTS * PAD) / MiB).toFixed(1)} MiB stream: peak RSS growth ${(growth / MiB).toFixed(1)} MiB\n`);
    assert.ok(growth < BOUND, `peak RSS grew by ${(growth / MiB).toFixed(1)} MiB (bound ${BOUND / MiB} MiB)`);
  } finally {
    for (const r of readers) r.socket.destroy();
    await server.kill();
  }
});
