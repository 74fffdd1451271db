/**
 * Memory per idle session: RSS after a full GC with N initialized sessions that do nothing,
 * minus RSS after a warm-up of 100, divided by N. Our endpoint runs on SQLite (where a
 * session may be passivated: with `limits.passivateAfterMs` when this build has it) and on
 * memory; the SDK transport as a user would run it. The session limit is raised to N.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSession } from './client.js';
import { startServer } from './proc.js';
import { pool } from './throughput.js';
import type { Contender } from './workload.js';

export interface IdleResult {
  contender: Contender;
  sessions: number;
  bytesPerSession: number;
  /** Whether the endpoint passivated idle sessions (the option exists in this build). */
  passivated: boolean;
}

export async function idleCost(contender: Contender, sessions: number): Promise<IdleResult> {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-bench-idle-'));
  const passivateAfterMs = 100;
  const server = await startServer(contender, { sqlitePath: join(dir, 'idle.db'), maxSessions: sessions + 1_000, passivateAfterMs });
  try {
    await pool(Array.from({ length: 100 }), 16, () => openSession(server.url));
    const before = await server.gc();
    await pool(Array.from({ length: sessions }), 32, () => openSession(server.url));
    if (server.passivation) await new Promise((resolve) => setTimeout(resolve, passivateAfterMs * 5));
    const after = await server.gc();
    return { contender, sessions, bytesPerSession: (after.rss - before.rss) / sessions, passivated: server.passivation && contender === 'sqlite' };
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
