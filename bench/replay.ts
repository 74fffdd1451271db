/**
 * Resumption: the last 40 events of a log of N, a full replay, SQLite bytes per event, and
 * detection and refusal of a resume at the upgrade boundary (a resume while an upgrade is
 * pending gets 410 `session-superseded`). The logs are written through the endpoint by the
 * same `burst` tool; retention is raised to hold them (the only option changed here).
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { burst, headers, openSession, rawSend, readEvents, replay } from './client.js';
import { startServer } from './proc.js';
import { spread, type Spread } from './stats.js';

export interface ReplayResult {
  store: 'memory' | 'sqlite' | 'sdk-store';
  events: number;
  /** ms to read the last 40 events, over `repeats` resumes. */
  last40Ms: Spread;
  /** Events the last-40 resume returned (40 when it is right). */
  last40Events: number;
  /** ms to replay the whole log (once per repeat, fewer repeats), when measured. */
  fullMs?: Spread | undefined;
  /** SQLite file bytes per event (after the server closed and checkpointed). */
  sqliteBytesPerEvent?: number | undefined;
}

/** Builds one log of `events` on `store` and times resumes from it. */
export async function replayCost(store: ReplayResult['store'], events: number, repeats: number, full: boolean): Promise<ReplayResult> {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-bench-replay-'));
  const sqlitePath = join(dir, 'replay.db');
  const contender = store === 'sdk-store' ? 'sdk-store' : store;
  const server = await startServer(contender, { sqlitePath, retainEvents: events + 1_000 });
  try {
    const s = await openSession(server.url);
    const read = await burst(server.url, s, events, 100, undefined, 41);
    const cursor = read.lastIds[0] as string;
    const last40: number[] = [];
    let last40Events = 0;
    for (let i = 0; i < repeats; i++) {
      const r = await replay(server.url, s, cursor, 40);
      last40.push(r.ms);
      last40Events = r.events;
    }
    let fullMs: Spread | undefined;
    if (full) {
      const times: number[] = [];
      for (let i = 0; i < 3; i++) times.push((await replay(server.url, s, read.firstId, events)).ms);
      fullMs = spread(times);
    }
    await server.close();
    const sqliteBytesPerEvent = store === 'sqlite' ? sizeOf(sqlitePath) / events : undefined;
    return { store, events, last40Ms: spread(last40), last40Events, fullMs, sqliteBytesPerEvent };
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function sizeOf(path: string): number {
  let n = 0;
  for (const p of [path, `${path}-wal`]) {
    try {
      n += statSync(p).size;
    } catch {
      // no WAL left after a clean close
    }
  }
  return n;
}

const UPGRADE_ACCEPTED = 'upgrade-accepted';

/**
 * Detection and refusal at the upgrade boundary: the client asks for the upgrade, reads the
 * offer, drops the connection before the WebSocket handshake, and resumes with the offer's
 * event ID. Timed from sending the resume to reading the whole 410 answer.
 */
export async function refusalCost(repeats: number): Promise<{ ms: Spread; refusedAs: string }> {
  const server = await startServer('memory', { upgrade: true });
  try {
    const times: number[] = [];
    let refusedAs = '';
    for (let i = 0; i < repeats; i++) {
      const s = await openSession(server.url);
      const res = await rawSend(server.url, 'GET', { accept: 'text/event-stream', ...headers(s, { 'x-mcp-upgrade': 'websocket' }) });
      let offerId = '';
      await new Promise<void>((resolve) => {
        void readEvents(res, (id, data) => {
          if (data.includes(UPGRADE_ACCEPTED)) {
            offerId = id;
            res.destroy();
            resolve();
          }
          return false;
        }).then(() => resolve());
      });
      if (offerId === '') throw new Error('no upgrade offer');
      const r = await replay(server.url, s, offerId, 1);
      times.push(r.ms);
      refusedAs = `${r.status} ${(JSON.parse(r.body || '{}') as { error?: { data?: { reason?: string } } }).error?.data?.reason ?? ''}`;
    }
    return { ms: spread(times), refusedAs };
  } finally {
    await server.close();
  }
}

/**
 * The floor under every resume time above: a GET for an unknown session on a fresh
 * connection, timed the same way (send to the whole 404 read). What a resume costs beyond
 * it is the server's lookup, check and replay.
 */
export async function requestFloor(repeats: number): Promise<Spread> {
  const server = await startServer('memory');
  try {
    const times: number[] = [];
    for (let i = 0; i < repeats; i++) {
      const r = await replay(server.url, { id: 'no-such-session', protocolVersion: '2025-11-25' }, 'x', 1);
      if (r.status !== 404) throw new Error(`request floor: expected 404, got ${r.status}`);
      times.push(r.ms);
    }
    return spread(times);
  } finally {
    await server.close();
  }
}
