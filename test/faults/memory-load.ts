/**
 * Memory under load, measured on a server process (its RSS alone, from /proc):
 * 10,000 idle sessions, then 1,000 readers that never read (16 per session, the default
 * cap, each resuming a 1 MB stream from its start). Prints one line per phase.
 *
 *   node --import tsx test/faults/memory-load.ts [sessions] [readers]
 */
import { initialize, rpc, send, sessionHeaders, type Handshake } from '../helpers/sse-client.js';
import { within } from '../helpers/wait.js';
import { openIdleReader, type IdleReader } from './idle-readers.js';
import { MiB, memoryOf, startServerProcess } from './process.js';

const SESSIONS = Number(process.argv[2] ?? 10_000);
const READERS = Number(process.argv[3] ?? 1_000);
const PER_SESSION = 16;

async function pool<T>(n: number, concurrency: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        const i = next++;
        out[i] = await task(i);
      }
    }),
  );
  return out;
}

const mb = (n: number): string => `${(n / MiB).toFixed(1)} MiB`;
const server = await startServerProcess({ keepAlive: true, limits: { maxSessions: SESSIONS + 1000, maxReadersPerSession: PER_SESSION } }, ['--expose-gc']);
const pid = server.child.pid as number;
/** RSS after a full collection: live memory, not garbage the collector has not reached yet. */
async function settledRss(): Promise<number> {
  await fetch(new URL('/__gc', server.url), { method: 'POST' });
  return memoryOf(pid).rss;
}
const readers: IdleReader[] = [];
try {
  // Warm up the process (module loading, first session) before the baseline.
  await initialize(server.url);
  const base = await settledRss();
  let t = Date.now();
  await pool(SESSIONS, 16, () => initialize(server.url));
  const idle = await settledRss();
  console.log(
    `idle sessions: ${SESSIONS} in ${((Date.now() - t) / 1000).toFixed(1)} s; RSS ${mb(base)} → ${mb(idle)}: ${((idle - base) / SESSIONS / 1024).toFixed(1)} KiB per session`,
  );

  const sessions = Math.ceil(READERS / PER_SESSION);
  t = Date.now();
  const streams = await pool(sessions, 8, async () => {
    const h: Handshake = await initialize(server.url);
    const r = await send(server.url, {
      body: rpc('tools/call', { name: 'produce', arguments: { run: 'm', count: 100, pad: 5000 } }),
      headers: sessionHeaders(h),
      timeoutMs: 60_000,
    });
    return { h, cursor: r.events.find((e) => e.id)?.id as string };
  });
  const before = await settledRss();
  for (let i = 0; i < READERS; i++) {
    const s = streams[i % sessions] as { h: Handshake; cursor: string };
    readers.push(openIdleReader(server.url, { ...sessionHeaders(s.h), 'last-event-id': s.cursor }));
  }
  await within(Promise.all(readers.map((r) => r.firstBytes)), 'every reader admitted', 120_000);
  const listed = Date.now();
  const h = (streams[0] as { h: Handshake }).h;
  await send(server.url, { body: rpc('tools/list'), headers: sessionHeaders(h) });
  const listMs = Date.now() - listed;
  const { peak } = memoryOf(pid);
  const rss = await settledRss();
  console.log(
    `idle readers: ${READERS} over ${sessions} sessions (1 MB streams) in ${((Date.now() - t) / 1000).toFixed(1)} s; RSS ${mb(before)} → ${mb(rss)} (peak ${mb(peak)}): ` +
      `${((rss - before) / READERS / 1024).toFixed(1)} KiB per reader; tools/list meanwhile ${listMs} ms`,
  );
} finally {
  for (const r of readers) r.socket.destroy();
  await server.kill();
}
