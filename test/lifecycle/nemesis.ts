/**
 * The nemesis: applies a schedule's operations to the cluster, one after another, each
 * after its scheduled delay, recording when each began and ended. Every operation leaves
 * the cluster at its size with every replica running (a killed or stopped replica is
 * replaced, a paused one continued).
 */
import { setTimeout as delay } from 'node:timers/promises';
import { LEASE_MS, type Cluster } from './cluster.js';
import type { History } from './history.js';
import { describeOp, GRACEFUL_OPS, type NemesisOp, type Step } from './schedule.js';
import type { ServeProcess } from './serve-process.js';

/** SIGTERM's drain bound in the cluster, plus the time to exit. */
const EXIT_MS = 15_000;

export interface NemesisOptions {
  /** Stop before the next op when this returns true (the run's time budget). */
  abort?: () => boolean;
}

async function apply(cluster: Cluster, op: NemesisOp, history: History): Promise<string> {
  const n = cluster.replicas.length;
  const single = n === 1;
  const at = (i: number): ServeProcess => cluster.replicas[i % n] as ServeProcess;
  switch (op.kind) {
    case 'sigterm': {
      const i = op.replica % n;
      const r = at(i);
      if (single) history.add({ type: 'gap', open: true });
      r.signal('SIGTERM');
      await r.exited(EXIT_MS);
      const next = await cluster.replace(i, false);
      if (single) history.add({ type: 'gap', open: false });
      return `pid ${r.pid} → ${next.pid} on :${next.port}`;
    }
    case 'new-replica': {
      const i = op.replica % n;
      const r = at(i);
      await cluster.add();
      r.signal('SIGTERM');
      await r.exited(EXIT_MS);
      await cluster.remove(i);
      return `pid ${r.pid} on :${r.port} replaced by :${cluster.replicas.at(-1)?.port}`;
    }
    case 'kill9': {
      const i = op.replica % n;
      const r = at(i);
      if (single) history.add({ type: 'gap', open: true });
      r.signal('SIGKILL');
      await r.exited(EXIT_MS);
      const next = await cluster.replace(i, op.newPort);
      if (single) history.add({ type: 'gap', open: false });
      return `pid ${r.pid} → ${next.pid} on :${next.port}`;
    }
    case 'pause': {
      const r = at(op.replica);
      r.signal('SIGSTOP');
      // The pause is the schedule (past the lease), not a wait for a condition.
      await delay(op.ms);
      r.signal('SIGCONT');
      return `pid ${r.pid} for ${op.ms} ms (lease ${LEASE_MS} ms)`;
    }
    case 'cut':
      return `${cluster.cut(op.all)} connection(s) reset`;
    case 'pubsub-kill':
      return await cluster.killPubsub();
  }
}

/** Runs `steps` against `cluster`. */
export async function runNemesis(cluster: Cluster, steps: readonly Step[], history: History, options: NemesisOptions): Promise<void> {
  for (const [index, step] of steps.entries()) {
    if (options.abort?.()) return;
    await delay(step.delayMs);
    const detail = `#${index} ${describeOp(step.op)}`;
    const graceful = GRACEFUL_OPS.has(step.op.kind);
    history.add({ type: 'nemesis', phase: 'start', op: step.op.kind, graceful, detail });
    let outcome: string;
    try {
      outcome = await apply(cluster, step.op, history);
    } catch (error) {
      outcome = `failed: ${String(error).slice(0, 200)}`;
      if (cluster.replicas.length === 1) history.add({ type: 'gap', open: false });
    }
    history.add({ type: 'nemesis', phase: 'end', op: step.op.kind, graceful, detail, outcome });
  }
}
