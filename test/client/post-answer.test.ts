/** The pure classification of a POST's answer: one row per verdict, and the cases between them. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { classifyPost, needsRejectionText, type PostAnswer, type PostVerdict } from '../../src/client/post-answer.js';

const base: PostAnswer = { status: 200, contentType: 'text/event-stream', hasBody: true, epoch: 'E1', session: 's1', knownEpoch: 'E1', initializing: false };
const noSession = '{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}';

const rows: Array<[string, Partial<PostAnswer>, PostVerdict]> = [
  ['404 on a session', { status: 404 }, { kind: 'session-gone', status: 404 }],
  ['400 naming the session', { status: 400, rejection: noSession }, { kind: 'session-gone', status: 400 }],
  ['400 about something else', { status: 400, rejection: '{"error":{"message":"bad params"}}' }, { kind: 'refused', status: 400 }],
  ['404 while initializing is a refusal', { status: 404, initializing: true, session: undefined }, { kind: 'refused', status: 404 }],
  ['404 without a session is a refusal', { status: 404, session: undefined }, { kind: 'refused', status: 404 }],
  ['503', { status: 503 }, { kind: 'refused', status: 503 }],
  ['another epoch', { epoch: 'E2' }, { kind: 'epoch-changed', expected: 'E1', actual: 'E2' }],
  ['an epoch where none was known', { epoch: 'E2', knownEpoch: null }, { kind: 'epoch-changed', expected: null, actual: 'E2' }],
  ['no epoch header', { epoch: null }, { kind: 'stream' }],
  ['another epoch at initialize', { epoch: 'E2', initializing: true }, { kind: 'stream' }],
  ['202', { status: 202, hasBody: false, contentType: '' }, { kind: 'accepted' }],
  ['200 without a body', { hasBody: false }, { kind: 'accepted' }],
  ['SSE', { contentType: 'text/event-stream; charset=utf-8' }, { kind: 'stream' }],
  ['JSON', { contentType: 'application/json' }, { kind: 'json' }],
  ['HTML', { contentType: 'text/html' }, { kind: 'not-an-answer', contentType: 'text/html' }],
  ['no Content-Type', { contentType: '' }, { kind: 'not-an-answer', contentType: '' }],
];

for (const [name, change, verdict] of rows) {
  test(`classifyPost: ${name}`, () => {
    assert.deepEqual(classifyPost({ ...base, ...change }), verdict);
  });
}

test('every verdict kind has a row', () => {
  const kinds = new Set(rows.map(([, , v]) => v.kind));
  assert.deepEqual([...kinds].sort(), ['accepted', 'epoch-changed', 'json', 'not-an-answer', 'refused', 'session-gone', 'stream']);
});

test('needsRejectionText: only a 400 on a session, not at initialize', () => {
  assert.equal(needsRejectionText(400, 's', false), true);
  assert.equal(needsRejectionText(400, undefined, false), false);
  assert.equal(needsRejectionText(400, 's', true), false);
  assert.equal(needsRejectionText(404, 's', false), false);
});
