/**
 * How a conformance run is judged against its baseline, on result folders written here:
 * every rule that can fail a run fails it, and a clean run passes.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { judge, parseServerScenarios, scenarioOf, type Baseline, type Check } from '../../scripts/conformance-suite.js';

const STAMP = '2026-11-30T15-17-23-468Z';

function results(scenarios: Record<string, Array<Pick<Check, 'id' | 'status'>> | 'no-checks'>): string {
  const out = mkdtempSync(join(tmpdir(), 'mcp-judge-'));
  for (const [name, checks] of Object.entries(scenarios)) {
    const dir = join(out, `${name}-${STAMP}`);
    mkdirSync(dir);
    if (checks !== 'no-checks') writeFileSync(join(dir, 'checks.json'), JSON.stringify(checks.map((c) => ({ ...c, name: c.id }))));
  }
  return out;
}

function baseline(expectedFailures: Record<string, string> = {}): Baseline {
  return { version: '0', expectedFailures, clientScenarios: ['initialize'] };
}

function verdictOf(
  scenarios: Parameters<typeof results>[0],
  base: Baseline,
  exits: Array<[string, number]> = [
    ['*', 0],
    ['initialize', 0],
  ],
  expected = ['ping', 'initialize'],
) {
  const out = results(scenarios);
  try {
    return judge(out, base, { scenarios: expected, exits: new Map(exits) });
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

describe('conformance: judging a run', () => {
  it('names scenarios from 0.1.x (server-/client- prefixed) and 0.2.x (bare) folders', () => {
    assert.equal(scenarioOf(`server-tools-list-${STAMP}`), 'tools-list');
    assert.equal(scenarioOf(`client-sse-retry-${STAMP}`), 'sse-retry');
    assert.equal(scenarioOf(`elicitation-sep1034-client-defaults-${STAMP}`), 'elicitation-sep1034-client-defaults');
  });

  it('reads the server scenarios from a `list` output, bare (0.1.13, 0.2.x) or with spec versions (0.1.14 and later)', () => {
    const bare = 'Server scenarios (test against a server):\n  - server-initialize\n  - ping\n\nClient scenarios (test against a client):\n  - initialize\n';
    assert.deepEqual(parseServerScenarios(bare), ['server-initialize', 'ping']);
    const versioned =
      'Server scenarios (test against a server):\n  - server-initialize [2025-06-18,2025-11-25]\n  - dns-rebinding-protection [2025-11-25]\n\nClient scenarios (test against a client):\n  - initialize [2025-06-18,2025-11-25]\n';
    assert.deepEqual(parseServerScenarios(versioned), ['server-initialize', 'dns-rebinding-protection']);
    const tagged = 'Required for 2025-11-25 (2 scenarios):\n  - ping [server]\n  - initialize [client]\n';
    assert.deepEqual(parseServerScenarios(tagged), ['ping']);
  });

  it('a clean run passes', () => {
    const v = verdictOf({ 'server-ping': [{ id: 'ping', status: 'SUCCESS' }], initialize: [{ id: 'init', status: 'SUCCESS' }] }, baseline());
    assert.deepEqual(v.problems, []);
    assert.equal(v.passed, 2);
  });

  it('an unlisted failure fails it; a listed one does not', () => {
    const scenarios = { 'server-ping': [{ id: 'ping', status: 'FAILURE' }], initialize: [{ id: 'init', status: 'SUCCESS' }] };
    assert.match(verdictOf(scenarios, baseline()).problems.join('\n'), /^FAIL ping\/ping/m);
    assert.deepEqual(
      verdictOf(scenarios, baseline({ 'ping/ping': 'known' }), [
        ['*', 1],
        ['initialize', 0],
      ]).problems,
      [],
    );
  });

  it('a listed failure that passes is a stale entry', () => {
    const v = verdictOf(
      { 'server-ping': [{ id: 'ping', status: 'SUCCESS' }], initialize: [{ id: 'init', status: 'SUCCESS' }] },
      baseline({ 'ping/ping': 'known' }),
    );
    assert.match(v.problems.join('\n'), /^STALE baseline entry ping\/ping/m);
  });

  it('a warning in a strict scenario fails it', () => {
    const v = verdictOf(
      {
        'server-ping': [{ id: 'ping', status: 'SUCCESS' }],
        'server-server-sse-polling': [{ id: 'retry', status: 'WARNING' }],
        initialize: [{ id: 'init', status: 'SUCCESS' }],
      },
      baseline(),
    );
    assert.match(v.problems.join('\n'), /^WARN server-sse-polling\/retry/m);
  });

  it('a scenario without results, or without checks.json, fails it', () => {
    const missing = verdictOf({ 'server-ping': [{ id: 'ping', status: 'SUCCESS' }] }, baseline());
    assert.match(missing.problems.join('\n'), /^MISSING initialize/m);
    const empty = verdictOf({ 'server-ping': [{ id: 'ping', status: 'SUCCESS' }], initialize: 'no-checks' }, baseline());
    assert.match(empty.problems.join('\n'), /^NO RESULTS initialize/m);
  });

  it('a non-zero exit without a listed failure to explain it fails it', () => {
    const scenarios = { 'server-ping': [{ id: 'ping', status: 'SUCCESS' }], initialize: [{ id: 'init', status: 'SUCCESS' }] };
    assert.match(
      verdictOf(scenarios, baseline(), [
        ['*', 0],
        ['initialize', 1],
      ]).problems.join('\n'),
      /^EXIT initialize: the suite exited 1/m,
    );
    assert.match(
      verdictOf(scenarios, baseline(), [
        ['*', 2],
        ['initialize', 0],
      ]).problems.join('\n'),
      /^EXIT \*: the suite exited 2/m,
    );
  });
});
