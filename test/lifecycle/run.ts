/**
 * Runs schedules: one cluster per topology, set up once and reused by its schedules; each
 * schedule's clients run while the nemesis works, then a little longer, then the history
 * gets the server's run counts and goes through the checkers.
 */
import { prng } from '../helpers/prng.js';
import { waitFor } from '../helpers/wait.js';
import { checkAll, type Violation } from './checkers.js';
import { Worker, type Mutation } from './clients.js';
import { LEASE_MS, startCluster, type Cluster } from './cluster.js';
import { History, type Event } from './history.js';
import { runNemesis } from './nemesis.js';
import { generate, topologyName, type Schedule, type Topology } from './schedule.js';

/** Calls each client completes before the nemesis starts, and after it ended. */
const WARM_CALLS = 1;
const TAIL_CALLS = 1;

export interface ScheduleResult {
  schedule: Schedule;
  history: Event[];
  violations: Violation[];
  elapsedMs: number;
  calls: number;
  /** A failure of the harness itself (setup), not of a checker. */
  error?: string | undefined;
}

let runCounter = 0;

/** One schedule against a running cluster of its topology. */
export async function runSchedule(cluster: Cluster, schedule: Schedule, mutation?: Mutation): Promise<ScheduleResult> {
  const started = Date.now();
  const history = new History();
  // Unique per run, so a schedule replayed on the same cluster counts only its own runs.
  const prefix = `${schedule.seed}.${process.pid}.${runCounter++}.`;
  // Every schedule starts without connections: fetch pools keep-alive sockets across
  // clients, and one the last schedule left behind could fail a first POST.
  cluster.cut(true);
  await waitFor(() => cluster.connections === 0, 'the connections of the last schedule to close', 10_000);
  const workers = schedule.clients.map(
    (kind, i) =>
      new Worker({
        name: `c${i}:${kind}`,
        kind,
        url: cluster.url,
        history,
        idPrefix: prefix,
        rand: prng(schedule.seed ^ (0x5bd1e995 + i)),
        maxSteps: schedule.maxSteps,
        maxIntervalMs: schedule.maxIntervalMs,
        mutation,
      }),
  );
  let error: string | undefined;
  try {
    await waitFor(() => workers.every((w) => w.finished || w.calls >= WARM_CALLS + 1), 'every client to have a session and a call under way', 30_000);
    await runNemesis(cluster, schedule.steps, history, {});
    const marks = workers.map((w) => w.calls);
    await waitFor(
      () => workers.every((w, i) => w.finished || w.calls >= (marks[i] ?? 0) + TAIL_CALLS),
      'every client to make calls after the nemesis',
      60_000,
    ).catch((e: unknown) => void (error = String(e)));
  } catch (e) {
    error = String(e);
  } finally {
    await Promise.all(workers.map((w) => w.close().catch((e: unknown) => void (error ??= String(e)))));
  }
  const runs = cluster.runs(prefix);
  for (const e of [...history.events]) if (e.type === 'invoke' && e.steps > 0) history.add({ type: 'runs', call: e.call, count: runs.get(e.call) ?? 0 });
  const invoked = new Set(history.events.filter((e) => e.type === 'invoke').map((e) => (e as { call: string }).call));
  for (const [call, count] of runs) if (!invoked.has(call)) history.add({ type: 'runs', call, count });
  await cluster.heal();
  return {
    schedule,
    history: history.events,
    violations: checkAll(history.events),
    elapsedMs: Date.now() - started,
    calls: workers.reduce((n, w) => n + w.calls, 0),
    error,
  };
}

export interface RunOptions {
  seeds: readonly number[];
  /** Nemesis operations per schedule at most (part of what a seed means: replays pass the same). */
  maxOps: number;
  /** A guarantee switched off on purpose: the run must then fail. */
  mutation?: Mutation | undefined;
  /** Stop starting schedules after this, ms. */
  budgetMs: number;
  log?: ((line: string) => void) | undefined;
  onResult?: ((result: ScheduleResult) => void) | undefined;
}

/** Runs the schedules of `seeds`, grouped by topology; each group gets its share of what is left of the budget. */
export async function runSeeds(options: RunOptions): Promise<{ results: ScheduleResult[]; elapsedMs: number; skipped: number }> {
  const started = Date.now();
  const groups = new Map<string, { topology: Topology; schedules: Schedule[] }>();
  for (const seed of options.seeds) {
    const s = generate(seed, { leaseMs: LEASE_MS, maxOps: options.maxOps });
    const key = topologyName(s.topology);
    if (!groups.has(key)) groups.set(key, { topology: s.topology, schedules: [] });
    groups.get(key)?.schedules.push(s);
  }
  const results: ScheduleResult[] = [];
  let skipped = 0;
  let left = groups.size;
  for (const [name, group] of groups) {
    const groupDeadline = Date.now() + (options.budgetMs - (Date.now() - started)) / left--;
    options.log?.(`# ${name}: ${group.schedules.length} schedule(s)`);
    const cluster = await startCluster(group.topology);
    try {
      for (const schedule of group.schedules) {
        if (Date.now() > groupDeadline) {
          skipped++;
          continue;
        }
        const result = await runSchedule(cluster, schedule, options.mutation);
        results.push(result);
        options.onResult?.(result);
      }
    } finally {
      await cluster.close();
    }
  }
  return { results, elapsedMs: Date.now() - started, skipped };
}
