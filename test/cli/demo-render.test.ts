/** The demo's strips and summary, from made-up observations. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderScenario, strip, summary } from '../../src/cli/demo/render.js';
import { failureDetail } from '../../src/cli/demo/scenario.js';
import type { Observation } from '../../src/cli/demo/scenario.js';

const seq = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

function observation(client: Observation['client'], seqs: number[], outcome: Observation['outcome'], events = 10): Observation {
  return {
    client,
    events,
    seqs,
    received: seqs.length,
    lost: 0,
    duplicated: 0,
    reordered: 0,
    outcome,
    detail: outcome === 'failed' ? 'request-abandoned' : '',
    divergences: [],
    ms: 1,
  };
}

test('strip: one character per event when there are few; lost, duplicated, reordered and never sent', () => {
  assert.equal(strip(observation('official SDK', seq(1, 10), 'completed')), '██████████');
  assert.equal(strip(observation('official SDK', [1, 2, 2, 4, 3, 6, 7, 8, 9, 10], 'completed')), '█DR█░█████', '2 twice, 3 after 4, 5 never');
  assert.equal(strip(observation('mcp-continuity', seq(1, 4), 'failed')), '████······', 'a failed call: the rest was never sent');
});

test('strip: buckets show the worst of their events', () => {
  const seqs = seq(1, 200).filter((s) => s !== 57);
  const line = strip({ events: 200, seqs, outcome: 'completed' }, 50);
  assert.equal(line.length, 50);
  assert.equal(line.indexOf('░'), 14, 'event 57 is in the 15th bucket of 4');
  assert.equal(line.replace('░', '').replace(/█/g, ''), '');
});

test('scenario rows and the summary count only calls that completed with damage', () => {
  const damaged = { ...observation('official SDK', [1, 3, 2], 'completed', 3), reordered: 1 };
  const refused = observation('mcp-continuity', [1], 'failed', 3);
  const text = renderScenario('3. burst', [refused, damaged], false);
  assert.match(text, /^ {2}official SDK +3 +0 +0 +1 +none +completed$/m);
  assert.match(text, /^ +█R█$/m);
  assert.equal(summary([refused, damaged]), 'calls that completed with lost, duplicated or reordered events: mcp-continuity 0 of 1, official SDK 1 of 1');
});

test('the summary counts calls, not events: one call that lost 117 events is one call', () => {
  const bad = { ...observation('official SDK', [1, 2], 'completed', 120), lost: 117, duplicated: 3 };
  const good = observation('official SDK', [1, 2, 3], 'completed', 3);
  const ours = observation('mcp-continuity', [1, 2, 3], 'completed', 3);
  assert.equal(summary([ours, bad, good]), 'calls that completed with lost, duplicated or reordered events: mcp-continuity 0 of 1, official SDK 1 of 2');
});

test("a failed call's detail is the error's whole first line, never cut short", () => {
  const message = 'Continuity undetectable on stream "0": opaque event IDs after a resume prove nothing; re-initializing\nstack';
  assert.equal(failureDetail(new Error(message)), message.split('\n')[0]);
  const row = renderScenario('1. cut', [{ ...observation('mcp-continuity', [1], 'failed', 3), detail: failureDetail(new Error(message)) }], false);
  assert.match(row, /opaque event IDs after a resume prove nothing; re-initializing$/m);
});
