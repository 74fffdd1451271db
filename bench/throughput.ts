/**
 * Throughput and latency: every contender serves the same bursts, in interleaved rounds
 * (the order rotates each round), after a warm-up round. Per round: events/s to the last
 * byte, server CPU µs/event, event latency p50/p99 (tool send → client read), and the
 * server's event-loop delay p99.
 */
import { burst, closeSession, Latencies, openSession, type Session } from './client.js';
import type { ServerProcess } from './proc.js';
import { spread, type Spread } from './stats.js';
import type { Contender } from './workload.js';

export interface Cell {
  /** Approximate JSON-RPC text size of each notification, bytes. */
  payload: number;
  sessions: number;
  /** Events per round, across all sessions. */
  burst: number;
}

export interface Round {
  eventsPerSec: number;
  cpuUsPerEvent: number;
  /** The kernel's share of `cpuUsPerEvent`, and minor page faults per event (NaN from a server that does not report them). */
  sysUsPerEvent: number;
  faultsPerEvent: number;
  p50Ms: number;
  p99Ms: number;
  eldP99Ms: number;
  resumes: number;
}

export interface CellResult extends Cell {
  contender: Contender;
  rounds: Round[];
  eventsPerSec: Spread;
  cpuUsPerEvent: Spread;
  p50Ms: Spread;
  p99Ms: Spread;
  eldP99Ms: Spread;
  resumes: number;
}

/** Runs `fn` over `items` with at most `limit` at once. */
export async function pool<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

async function round(server: ServerProcess, sessions: Session[], cell: Cell): Promise<Round> {
  const perSession = Math.max(1, Math.round(cell.burst / sessions.length));
  const total = perSession * sessions.length;
  const latencies = new Latencies(total);
  await server.reset();
  const started = performance.now();
  const reads = await Promise.all(sessions.map((s) => burst(server.url, s, perSession, cell.payload, latencies)));
  const seconds = (performance.now() - started) / 1000;
  const stats = await server.stats();
  return {
    eventsPerSec: total / seconds,
    cpuUsPerEvent: stats.cpuUs / total,
    sysUsPerEvent: (stats.sysUs ?? NaN) / total,
    faultsPerEvent: (stats.minorFaults ?? NaN) / total,
    p50Ms: latencies.percentile(50),
    p99Ms: latencies.percentile(99),
    eldP99Ms: stats.eldP99Ms,
    resumes: reads.reduce((n, r) => n + r.resumes, 0),
  };
}

/** One cell for every contender: sessions opened fresh, a warm-up round, then `rounds` interleaved rounds. */
export async function runCell(servers: readonly ServerProcess[], cell: Cell, rounds: number, log: (line: string) => void): Promise<CellResult[]> {
  const sessions = new Map<ServerProcess, Session[]>();
  for (const server of servers) {
    sessions.set(server, await pool(Array.from({ length: cell.sessions }), 32, () => openSession(server.url)));
  }
  const results = new Map<ServerProcess, Round[]>(servers.map((s) => [s, []]));
  const warm: Cell = { ...cell, burst: Math.min(cell.burst, Math.max(cell.sessions, 2_000)) };
  for (const server of servers) await round(server, sessions.get(server) as Session[], warm);
  for (let r = 0; r < rounds; r++) {
    const order = servers.map((_, i) => servers[(i + r) % servers.length] as ServerProcess);
    for (const server of order) (results.get(server) as Round[]).push(await round(server, sessions.get(server) as Session[], cell));
  }
  for (const server of servers) await pool(sessions.get(server) as Session[], 32, (s) => closeSession(server.url, s).catch(() => {}));
  const out = servers.map((server): CellResult => {
    const rs = results.get(server) as Round[];
    return {
      ...cell,
      contender: server.contender,
      rounds: rs,
      eventsPerSec: spread(rs.map((x) => x.eventsPerSec)),
      cpuUsPerEvent: spread(rs.map((x) => x.cpuUsPerEvent)),
      p50Ms: spread(rs.map((x) => x.p50Ms)),
      p99Ms: spread(rs.map((x) => x.p99Ms)),
      eldP99Ms: spread(rs.map((x) => x.eldP99Ms)),
      resumes: rs.reduce((n, x) => n + x.resumes, 0),
    };
  });
  for (const r of out) {
    log(
      `  ${r.contender.padEnd(13)} ${Math.round(r.eventsPerSec.median).toLocaleString('en-US').padStart(9)} ev/s  ` +
        `${r.cpuUsPerEvent.median.toFixed(1).padStart(6)} µs/ev (sys ${spread(r.rounds.map((x) => x.sysUsPerEvent)).median.toFixed(1)}, ` +
        `${spread(r.rounds.map((x) => x.faultsPerEvent)).median.toFixed(1)} faults)  p50/p99 ${r.p50Ms.median.toFixed(1)}/${r.p99Ms.median.toFixed(1)} ms  ` +
        `eld p99 ${r.eldP99Ms.median.toFixed(1)} ms${r.resumes ? `  resumes ${r.resumes}` : ''}`,
    );
  }
  return out;
}
