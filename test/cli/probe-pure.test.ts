/** The probe's pure parts added for trust: the overall verdict, semantic leak matching, redaction. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CheckResult } from '../../src/cli/probe/model.js';
import { overallVerdict } from '../../src/cli/probe/overall.js';
import { canonical, findLeaks } from '../../src/cli/probe/leak.js';
import { REDACTED, redact, secretsOf, splitCredentials } from '../../src/cli/probe/redact.js';

const check = (id: string, verdict: CheckResult['verdict'], extra: Partial<CheckResult> = {}): CheckResult => ({
  id,
  title: id,
  guards: 'g',
  verdict,
  detail: 'd',
  evidence: [],
  ms: 1,
  ...extra,
});

test('overall: one line, ranked; not resumable never reads better than losing events', () => {
  const safe = overallVerdict('legacy', false, [check('resume-post', 'pass', { resumable: true }), check('replay-epoch', 'FAIL', { severity: 'hygiene' })]);
  assert.equal(safe.verdict, 'resumes-safely');
  assert.equal(safe.exitCode, 0);
  assert.match(safe.line, /^resumes safely; also: 1 hygiene \(replay-epoch\)$/);
  const loses = overallVerdict('legacy', false, [
    check('resume-post', 'FAIL', { severity: 'loss', resumable: true }),
    check('unknown-session', 'FAIL', { severity: 'deviation' }),
  ]);
  assert.equal(loses.verdict, 'loses-events');
  assert.match(loses.line, /^resumes but loses events/);
  const deviates = overallVerdict('legacy', false, [
    check('resume-post', 'pass', { resumable: true }),
    check('unknown-session', 'FAIL', { severity: 'deviation' }),
  ]);
  assert.equal(deviates.verdict, 'resumes-with-deviations');
  const none = overallVerdict('legacy', false, [check('resume-post', 'n/a', { resumable: false }), check('resume-get', 'n/a', { resumable: false })]);
  assert.equal(none.verdict, 'not-resumable');
  assert.equal(none.line, 'not resumable: clients lose in-flight work on any cut');
  assert.ok(none.exitCode > loses.exitCode && loses.exitCode > deviates.exitCode && deviates.exitCode > safe.exitCode, 'exit codes follow the ranking');
  for (const o of [safe, loses, deviates, none]) assert.ok(o.remediation.length > 20, o.verdict);
  const modern = overallVerdict('modern', true, [check('host-origin', 'pass')]);
  assert.equal(modern.line, 'modern era: resumption not applicable');
  assert.equal(modern.exitCode, 0);
  assert.equal(
    overallVerdict('dual', false, [check('resume-post', 'FAIL', { severity: 'loss', resumable: true })]).verdict,
    'loses-events',
    'a dual server is judged on its 2025-era leg',
  );
});

test('leaks are matched by meaning: reordered keys, request IDs, progress tokens, payloads', () => {
  const a = [
    { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'probe-7000001', progress: 1 } },
    { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'secret report for tenant A' } },
    { jsonrpc: '2.0', id: 7000001, result: { content: [{ type: 'text', text: 'done' }] } },
  ];
  const marks = { requestIds: [7000001], progressTokens: ['probe-7000001'], sessionId: 'session-aaaaaaaa' };
  assert.equal(canonical({ b: 1, a: [{ d: 2, c: 3 }] }), canonical({ a: [{ c: 3, d: 2 }], b: 1 }));
  const reordered = { params: { progress: 1, progressToken: 'probe-7000001' }, method: 'notifications/progress', jsonrpc: '2.0' };
  assert.deepEqual(findLeaks(a, [reordered], marks), ["a message identical to one of A's"]);
  assert.match(
    findLeaks(a, [{ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'probe-7000001', progress: 9 } }], marks)[0] ?? '',
    /progress for A's token/,
  );
  assert.match(findLeaks(a, [{ jsonrpc: '2.0', id: 7000001, result: {} }], marks)[0] ?? '', /response to A's request/);
  assert.match(
    findLeaks(a, [{ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'debug', data: { copy: 'secret report for tenant A' } } }], marks)[0] ??
      '',
    /A's payload/,
  );
  assert.deepEqual(
    findLeaks(
      a,
      [
        { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'B is fine' } },
        { jsonrpc: '2.0', id: 1, result: {} },
      ],
      marks,
    ),
    [],
    "B's own messages are not leaks",
  );
});

test('redaction: header values, their token parts, URL credentials, secret query parameters', () => {
  const { url, authorization } = splitCredentials(new URL('http://alice:s3cr3t-pw@127.0.0.1:1/mcp?api_key=KEY-123456&x=1'));
  assert.equal(url.username, '');
  assert.equal(url.password, '');
  assert.match(authorization ?? '', /^Basic /);
  const secrets = secretsOf({ authorization: 'Bearer tok-abcdef', 'x-basic': authorization ?? '' }, [
    new URL('http://alice:s3cr3t-pw@h/mcp?api_key=KEY-123456'),
  ]);
  const report = {
    url: 'http://h/mcp?api_key=KEY-123456',
    evidence: ['authorization: Bearer tok-abcdef', 'echo tok-abcdef', 'pw s3cr3t-pw', 'alice'],
    nested: { 'tok-abcdef': 1 },
  };
  const out = JSON.stringify(redact(report, secrets));
  for (const secret of ['tok-abcdef', 's3cr3t-pw', 'KEY-123456', 'alice']) assert.ok(!out.includes(secret), `${secret} redacted: ${out}`);
  assert.ok(out.includes(REDACTED));
});
