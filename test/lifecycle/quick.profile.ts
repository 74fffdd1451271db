/**
 * The lifecycle harness's quick profile as a test: 100 seeded schedules (about 5 minutes)
 * against real clusters, every history checked. Named `.profile.ts`, not `.test.ts`, while
 * the current code still shows violations (drain, takeover, failover: see the report of
 * `npm run lifecycle`); rename it to `quick.test.ts` once a run is clean, and `npm test`
 * runs it. Alone:
 *
 *   node --import tsx --import ./scripts/test-child-stdout.mjs --test --test-timeout=900000 test/lifecycle/quick.profile.ts
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nginxOrSkip } from '../helpers/nginx.js';
import { redisAnswers } from '../helpers/redis.js';
import { failureReport, PROFILES, summary } from './report.js';
import { runSeeds } from './run.js';

const BASE_SEED = 33_000;

test('lifecycle quick profile: no checker finds a violation', { timeout: 15 * 60_000 }, async () => {
  if (!nginxOrSkip('the lifecycle harness') || !(await redisAnswers())) return;
  const { runs, budgetMs, maxOps } = PROFILES.quick;
  const { results, elapsedMs, skipped } = await runSeeds({ seeds: Array.from({ length: runs }, (_, i) => BASE_SEED + i), budgetMs, maxOps });
  const failing = results.filter((r) => r.violations.length > 0 || r.error !== undefined);
  const report = [summary(results, elapsedMs, skipped), ...failing.map((r) => failureReport(r, 'quick'))].join('\n\n');
  console.log(report);
  assert.ok(results.length >= Math.min(runs, 50), `at least half the schedules ran within the budget (${results.length})`);
  assert.equal(failing.length, 0, report);
});
