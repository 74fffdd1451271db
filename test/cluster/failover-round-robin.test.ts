/**
 * A Redis failover after a completed call, through a round robin of two replicas. A
 * primary with one replica behind a TCP virtual IP; the replica lags (SIGSTOP, its link
 * cut), a whole call runs and completes, acknowledged by the primary alone; the primary is
 * killed (kill -9), the replica promoted 50–500 ms later and the virtual IP moved to it.
 *
 * Whichever replica our client's next request reaches, the store going back must be
 * noticed: not only by the replica that wrote (its write counter), but by one that rebuilds
 * the session from the promoted store, or serves it for another. Silent is the client
 * carrying on in the same session, with no error, without the events it had received.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { isContinuityError } from '../../src/protocol/errors.js';
import type { DivergenceReport } from '../../src/client/index.js';
import { callThrough, connectClient, lag, laggingFailover, rig, type Rig } from '../helpers/failover-rig.js';
import { prng } from '../helpers/prng.js';
import { startRoundRobin } from '../helpers/round-robin.js';

const RUNS = Number(process.env.FAILOVER_RUNS ?? 20);
/** Runs at a time: each is mostly waiting on Redis and leases, and 20 in a row take minutes. */
const PARALLEL = 4;

interface Run {
  seed: number;
  silent: boolean;
  /** How it was noticed: the divergence reports' codes, or the failed call's. */
  signals: string[];
}

describe('Redis failover after a completed call, through a round robin of two replicas', () => {
  const rigs: Rig[] = [];
  after(async () => {
    for (const r of rigs) await r.stop().catch(() => {});
  });

  async function afterCompletedCall(seed: number): Promise<Run> {
    const random = prng(seed);
    const r = await rig();
    rigs.push(r);
    const first = r.replicas[0]?.url as URL;
    const proxy = await startRoundRobin(
      r.replicas.map((f) => f.url),
      first.pathname,
    );
    proxy.rotateTo(Math.floor(random() * 2));
    const reports: DivergenceReport[] = [];
    const { client, transport } = await connectClient(proxy.url, { onDivergence: (report) => reports.push(report) });
    const signals: string[] = [];
    try {
      const session = transport.sessionId;
      await client.callTool({ name: 'emit', arguments: { count: 2 } });
      await lag(r);
      // A whole call, acknowledged by the primary only.
      const done = await client.callTool({ name: 'emit', arguments: { count: 30 } });
      assert.ok(!('isError' in done && done.isError));
      await laggingFailover(r, 50 + Math.floor(random() * 451));
      try {
        await callThrough(client, 2);
      } catch (error) {
        signals.push(isContinuityError(error) ? error.code : String(error));
      }
      signals.push(...reports.map((report) => report.code));
      return { seed, silent: signals.length === 0 && transport.sessionId === session, signals };
    } finally {
      await client.close().catch(() => {});
      await proxy.close();
      await r.stop();
    }
  }

  it(`0 silent in ${RUNS} seeded runs`, { timeout: 600_000 }, async () => {
    const seeds = Array.from({ length: RUNS }, (_, i) => 301 + i);
    const runs: Run[] = [];
    for (let i = 0; i < seeds.length; i += PARALLEL) runs.push(...(await Promise.all(seeds.slice(i, i + PARALLEL).map(afterCompletedCall))));
    const silent = runs.filter((run) => run.silent).map((run) => run.seed);
    assert.deepEqual(silent, [], 'seeds that continued silently');
    // Every run was noticed with a typed signal naming what happened.
    for (const run of runs) assert.ok(run.signals.length > 0, `seed ${run.seed}: noticed without a signal`);
    console.log(`# signals: ${JSON.stringify(runs.map((run) => [run.seed, run.signals]))}`);
  });
});
