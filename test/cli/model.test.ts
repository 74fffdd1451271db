/** The probe's pure parts: timeline analysis, event keys, and the renderers. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeTimeline, eventKey, tally, type ProbeReport } from '../../src/cli/probe/model.js';
import { renderHtml } from '../../src/cli/probe/render-html.js';
import { renderJunit } from '../../src/cli/probe/render-junit.js';
import { renderText } from '../../src/cli/probe/render-text.js';
import { judgeAcrossBoundary, judgeForgedCursor, judgeResume } from '../../src/cli/probe/verdicts.js';

const keys = (n: number): string[] => Array.from({ length: n }, (_, i) => `log ${i + 1}`);

test('an exact resume is intact', () => {
  const t = analyzeTimeline(keys(6), keys(6).slice(0, 2), keys(6).slice(2));
  assert.deepEqual([t.lost, t.duplicated, t.reordered], [0, 0, 0]);
  assert.deepEqual(
    t.marks.map((m) => m.kind),
    ['sent', 'sent', 'cut', 'resume', 'replayed', 'replayed', 'replayed', 'replayed'],
  );
});

test('lost, duplicated and reordered events are counted and marked', () => {
  // Seen: 1 2 | cut | 2 (again) 5 4 (behind 5) — 3 and 6 never arrive.
  const t = analyzeTimeline(keys(6), ['log 1', 'log 2'], ['log 2', 'log 5', 'log 4']);
  assert.equal(t.duplicated, 1);
  assert.equal(t.reordered, 1);
  assert.equal(t.lost, 2);
  assert.deepEqual(
    t.marks.filter((m) => m.kind === 'lost').map((m) => m.key),
    ['log 3', 'log 6'],
  );
  assert.deepEqual(t.marks.find((m) => m.kind === 'reordered')?.key, 'log 4');
});

test('a replay from zero shows up as duplicates', () => {
  const t = analyzeTimeline(keys(4), ['log 1', 'log 2'], keys(4));
  assert.equal(t.duplicated, 2);
  assert.equal(t.lost, 0);
});

test('event keys: progress, emit log sequence, "#N" texts, responses', () => {
  assert.equal(eventKey({ method: 'notifications/progress', params: { progress: 7, progressToken: 'x' } }), 'progress 7');
  assert.equal(eventKey({ method: 'notifications/message', params: { level: 'info', data: { seq: 3, pad: '' } } }), 'log 3');
  assert.equal(eventKey({ method: 'notifications/message', params: { level: 'info', data: 'Periodic notification #12 at 2026-01-01' } }), 'log 12');
  assert.equal(eventKey({ jsonrpc: '2.0', id: 1004, result: {} }), 'response 1004');
});

const report: ProbeReport = {
  url: 'http://127.0.0.1:1/mcp',
  startedAt: '2026-11-30T00:00:00.000Z',
  server: { name: 'x <y>', protocolVersion: '2025-11-25', stateless: false, tool: 'emit', era: 'legacy', eraEvidence: 'server/discover is not served' },
  checks: [
    { id: 'a', title: 'A', guards: 'loss', verdict: 'pass', detail: 'fine', evidence: ['GET /'], ms: 3 },
    {
      id: 'b',
      title: 'B',
      guards: 'silent 200',
      verdict: 'FAIL',
      detail: 'got "200" & <nothing>',
      evidence: ['GET /\u0001'],
      timeline: analyzeTimeline(keys(3), ['log 1'], ['log 3']),
      ms: 5,
    },
    { id: 'c', title: 'C', guards: 'reorder', verdict: 'n/a', detail: 'no upgrade', evidence: [], ms: 1 },
  ],
  overall: { verdict: 'loses-events', line: 'resumes but loses events', remediation: 'fix it', exitCode: 4 },
};

test('renderers: counts, escaping, colour only when asked', () => {
  assert.deepEqual(tally(report.checks), { pass: 1, FAIL: 1, 'n/a': 1 });
  const xml = renderJunit(report);
  assert.match(xml, /tests="3" failures="1" skipped="1"/);
  assert.match(xml, /<failure type="deviation" message="got &#34;200&#34; &#38; &#60;nothing&#62;">/);
  assert.ok(!xml.includes('\u0001'), 'control characters dropped');
  assert.match(xml, /<skipped message="no upgrade"\/>/);
  const plain = renderText(report, { colour: false });
  assert.ok(!plain.includes('\x1b['), 'no ANSI codes');
  assert.match(plain, /1 pass, 1 FAIL, 1 not applicable/);
  assert.ok(renderText(report, { colour: true }).includes('\x1b[31;1mFAIL'), 'FAIL in bold red');
  const html = renderHtml(report);
  assert.match(html, /x &#60;y&#62;/);
  assert.match(html, /<svg class="timeline" id="timeline-b"/);
  assert.equal((html.match(/class="mark lost"/g) ?? []).length, 1);
});

test('verdict rules: a plain resume must continue exactly; across a boundary an explicit refusal passes', () => {
  const exact = analyzeTimeline(keys(4), keys(4).slice(0, 1), keys(4).slice(1));
  const holed = analyzeTimeline(keys(4), keys(4).slice(0, 1), ['log 4']);
  assert.equal(judgeResume({ status: 200, reason: '', timeline: exact }).verdict, 'pass');
  assert.equal(judgeResume({ status: 200, reason: '', timeline: holed }).verdict, 'FAIL');
  assert.equal(judgeResume({ status: 409, reason: 'cursor-ahead', timeline: exact }).verdict, 'FAIL', 'refusing an honourable cursor fails');
  assert.equal(judgeAcrossBoundary('restart', { status: 404, reason: 'session-not-found', timeline: holed }).verdict, 'pass');
  assert.equal(
    judgeAcrossBoundary('restart', { status: 200, reason: '', timeline: holed, terminal: 'request-abandoned' }).verdict,
    'FAIL',
    'an error response never excuses a hole',
  );
  assert.equal(judgeAcrossBoundary('restart', { status: 200, reason: '', timeline: holed, terminal: 'request-abandoned' }).severity, 'loss');
  assert.equal(
    judgeAcrossBoundary('restart', { status: 200, reason: '', timeline: exact, terminal: 'request-abandoned' }).verdict,
    'pass',
    'every event, then an error: explicit',
  );
  assert.equal(judgeAcrossBoundary('restart', { status: 200, reason: '', timeline: holed }).verdict, 'FAIL', 'a silent hole fails');
  assert.equal(judgeAcrossBoundary('restart', { status: 503, reason: '', timeline: exact }).verdict, 'FAIL');
  assert.equal(judgeAcrossBoundary('replica', { status: 200, reason: '', timeline: exact }).verdict, 'pass');
  assert.equal(judgeForgedCursor('x', 400, 0).verdict, 'pass');
  assert.match(judgeForgedCursor('x', 200, 0).detail, /silent 200 with 0 events/);
  assert.equal(judgeForgedCursor('x', 500, 0).verdict, 'FAIL');
});
