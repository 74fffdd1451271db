/** Which rejections name the session as their cause (and so prove the request never ran). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { namesSession } from '../../src/client/refusal.js';

const body = (message: string): string => JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message } });

test('namesSession: session rejections yes, other 400s no', () => {
  assert.equal(namesSession(400, body('Bad Request: No valid session ID provided')), true);
  assert.equal(namesSession(404, body('Session not found')), true);
  assert.equal(namesSession(400, body('Bad Request: Mcp-Session-Id header is required')), true);
  assert.equal(namesSession(400, 'Invalid or expired session'), true);
  assert.equal(namesSession(400, body('Invalid params: name is required')), false);
  assert.equal(namesSession(400, body('Parse error')), false);
  assert.equal(namesSession(400, body('Session created')), false);
  assert.equal(namesSession(500, body('No valid session ID provided')), false);
  assert.equal(namesSession(400, JSON.stringify({ error: { message: 42 } })), false);
});
