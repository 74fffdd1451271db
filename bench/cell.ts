/**
 * One throughput cell, for investigating: `node --import tsx bench/cell.ts <contenders> <payload> <sessions> <burst> [rounds]`,
 * e.g. `bench/cell.ts sdk,memory 4096 32 20000`. With `BENCH_CPU_PROF=<dir>` each server
 * process writes a V8 CPU profile there; with `BENCH_MEMORY_MAX_MIB=<n>` the memory store's
 * process-wide budget is `n` MiB instead of its default (what retaining the log costs).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from './proc.js';
import { runCell } from './throughput.js';
import { CONTENDERS, type Contender } from './workload.js';

const [list = 'sdk,memory', payload = '100', sessions = '1', burst = '20000', rounds = '3'] = process.argv.slice(2);
const contenders = list.split(',').filter((c): c is Contender => (CONTENDERS as readonly string[]).includes(c));
const dir = mkdtempSync(join(tmpdir(), 'mcp-bench-cell-'));
const budgetMiB = Number(process.env['BENCH_MEMORY_MAX_MIB'] ?? 0);
const servers = await Promise.all(
  contenders.map((c) => startServer(c, { sqlitePath: join(dir, 'cell.db'), ...(budgetMiB > 0 ? { memoryMaxTotalBytes: budgetMiB * 1024 * 1024 } : {}) })),
);
try {
  await runCell(servers, { payload: Number(payload), sessions: Number(sessions), burst: Number(burst) }, Number(rounds), console.log);
} finally {
  await Promise.all(servers.map((s) => s.close()));
  rmSync(dir, { recursive: true, force: true });
}
