/**
 * Mutation checks on a real cluster: the same schedule (seed 33005: two replicas on Redis
 * behind the round-robin proxy, the SDK v1 client twice, one replica paused past its lease)
 * run with one guarantee switched off in the clients; the harness must find each violation
 * with the checker that guards it, and name the seed to replay.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { redisOrSkip } from '../helpers/redis.js';
import type { Checker } from './checkers.js';
import type { Mutation } from './clients.js';
import { LEASE_MS, startCluster, type Cluster } from './cluster.js';
import { failureReport, PROFILES } from './report.js';
import { runSchedule } from './run.js';
import { generate } from './schedule.js';

const SEED = 33_005;
const schedule = generate(SEED, { leaseMs: LEASE_MS, maxOps: PROFILES.quick.maxOps });

const EXPECTED: ReadonlyArray<[Mutation, Checker[]]> = [
  ['double-run', ['at-most-once']],
  ['level', ['graceful', 'ungraceful']],
  ['drop-log', ['divergence']],
  ['hang', ['liveness']],
];

let cluster: Cluster | undefined;
before(async () => {
  if (await redisOrSkip('the lifecycle mutation checks')) cluster = await startCluster(schedule.topology);
});
after(() => cluster?.close());

for (const [mutation, checkers] of EXPECTED) {
  test(`with ${mutation} switched on, the ${checkers.join(' or ')} checker finds it and names the seed`, { timeout: 180_000 }, async () => {
    if (!cluster) return;
    const result = await runSchedule(cluster, schedule, mutation);
    const found = result.violations.filter((v) => checkers.includes(v.checker));
    assert.ok(found.length > 0, `no ${checkers.join('/')} violation: ${JSON.stringify(result.violations.slice(0, 5))}`);
    assert.match(failureReport(result, 'quick'), new RegExp(`--seed ${SEED}\\b`));
  });
}
