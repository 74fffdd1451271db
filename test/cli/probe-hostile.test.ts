/**
 * The probe against hostile servers, each the shape of a wrong PASS it once gave: it now
 * FAILs each one, with the severity and overall verdict a reader acts on, and passes the
 * same server without the fault.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ProbeReport } from '../../src/cli/probe/model.js';
import { restartCommand, startHostileProbeServer, type ProbeFault } from '../helpers/hostile-probe-server.js';
import { runCli } from './run-cli.js';

async function probeAgainst(
  fault: ProbeFault,
  extra: (s: { replica: URL; restartUrl: URL }) => string[] = () => [],
): Promise<{ report: ProbeReport; code: number | null; stderr: string }> {
  const server = await startHostileProbeServer(fault);
  try {
    const r = await runCli(['probe', server.url.href, '--json', ...extra(server)], { timeoutMs: 100_000 });
    assert.ok(r.stdout.length > 0, `a report: ${r.stderr}`);
    return { report: JSON.parse(r.stdout) as ProbeReport, code: r.code, stderr: r.stderr };
  } finally {
    await server.close();
  }
}

const result = (report: ProbeReport, id: string) => report.checks.find((c) => c.id === id);
const withBoundaries = (s: { replica: URL; restartUrl: URL }): string[] => ['--replica', s.replica.href, '--restart-cmd', restartCommand(s.restartUrl)];

test('without a fault the hostile server passes every applicable check, across restart and replica', { timeout: 120_000 }, async () => {
  const { report, code } = await probeAgainst('none', withBoundaries);
  const failed = report.checks.filter((c) => c.verdict === 'FAIL').map((c) => `${c.id}: ${c.detail}`);
  assert.deepEqual(failed, []);
  for (const id of ['restart', 'replica', 'foreign-cursor', 'delete-session', 'semantic'])
    assert.equal(result(report, id)?.verdict, 'pass', `${id}: ${result(report, id)?.detail}`);
  assert.equal(report.overall.line, 'resumes safely');
  assert.equal(code, 0);
});

test('a hole on the replica and after a restart, excused by an error response, FAILs as loss', { timeout: 120_000 }, async () => {
  const { report, code } = await probeAgainst('hole-then-error', withBoundaries);
  for (const id of ['restart', 'replica']) {
    const c = result(report, id);
    assert.equal(c?.verdict, 'FAIL', `${id}: ${c?.detail}`);
    assert.equal(c?.severity, 'loss');
    assert.match(c?.detail ?? '', /lost.*error response \(request abandoned\) that does not excuse the hole/);
  }
  assert.match(report.overall.line, /^resumes but loses events/);
  assert.equal(code, 4);
});

test("session A's events replayed to session B with their keys reordered FAIL foreign-cursor", { timeout: 120_000 }, async () => {
  const { report } = await probeAgainst('foreign-leak');
  const c = result(report, 'foreign-cursor');
  assert.equal(c?.verdict, 'FAIL', c?.detail);
  assert.equal(c?.severity, 'loss');
  assert.match(c?.detail ?? '', /session B received \d+ of session A's messages/);
});

test('resumes still served after DELETE FAIL delete-session', { timeout: 120_000 }, async () => {
  const { report } = await probeAgainst('resume-after-delete');
  const c = result(report, 'delete-session');
  assert.equal(c?.verdict, 'FAIL', c?.detail);
  assert.match(c?.detail ?? '', /resume \(GET with Last-Event-ID\) after DELETE got HTTP 200/);
});

test('a restart that loses the log level FAILs the semantic check', { timeout: 120_000 }, async () => {
  const { report } = await probeAgainst('forget-level-on-restart', (s) => ['--restart-cmd', restartCommand(s.restartUrl)]);
  const c = result(report, 'semantic');
  assert.equal(c?.verdict, 'FAIL', c?.detail);
  assert.equal(c?.severity, 'loss');
  assert.match(c?.detail ?? '', /after --restart-cmd: the log level emergency set with logging\/setLevel was lost/);
});

test('a call resumed on the replica that runs again FAILs at-most-once (with a countable --tool)', { timeout: 120_000 }, async () => {
  const { report } = await probeAgainst('rerun-on-replica', (s) => ['--replica', s.replica.href, '--tool', 'emit', '--args', '{"count":30,"intervalMs":5}']);
  const c = result(report, 'at-most-once');
  assert.equal(c?.verdict, 'FAIL', c?.detail);
  assert.match(c?.detail ?? '', /ran (again|more than once)/);
});
