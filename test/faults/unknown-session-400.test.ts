/**
 * A server that answers 400, not 404, for an unknown session (the official
 * server-everything: "Bad Request: No valid session ID provided"). When a request carried
 * a session id and its rejection names the session as the cause, the client treats the
 * session as gone: it re-initializes and re-sends the request, which provably never ran —
 * the application sees a result, not a raw `HTTP 400`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ContinuityClientTransport, type DivergenceReport } from '../../src/client/index.js';
import { waitFor, within } from '../helpers/wait.js';
import { startEverything, type Everything } from './everything.js';

test('server-everything restarted: a 400 "No valid session ID" re-initializes and the call succeeds', async (t) => {
  let server: Everything = await startEverything();
  t.after(() => server.kill());
  const reports: DivergenceReport[] = [];
  // No standalone stream: only the POST can find out that the session is gone.
  const transport = new ContinuityClientTransport(server.url, { standaloneStream: false, onDivergence: (r) => reports.push(r) });
  const client = new Client({ name: 'unknown-session', version: '0' });
  t.after(() => client.close());
  await client.connect(transport);
  const before = transport.sessionId;
  const first = await client.callTool({ name: 'echo', arguments: { message: 'one' } });
  assert.match(JSON.stringify(first.content), /one/);

  const port = server.port;
  await server.kill();
  server = await startEverything(port);

  const second = await within(client.callTool({ name: 'echo', arguments: { message: 'two' } }), 'the call after the restart', 20_000);
  assert.match(JSON.stringify(second.content), /two/);
  assert.equal(reports.length, 1, 'one recovery');
  assert.equal(reports[0]?.code, 'session-not-found');
  assert.equal(reports[0]?.failedRequests, 0, 'nothing failed: the rejected request was re-sent');
  assert.notEqual(transport.sessionId, before, 'a new session');
});

test('server-everything restarted: the standalone GET hears the 400 and names it session-not-found', async (t) => {
  let server: Everything = await startEverything();
  t.after(() => server.kill());
  const reports: DivergenceReport[] = [];
  const transport = new ContinuityClientTransport(server.url, { reconnect: { initialDelayMs: 10, maxDelayMs: 50 }, onDivergence: (r) => reports.push(r) });
  const client = new Client({ name: 'unknown-session', version: '0' });
  t.after(() => client.close());
  await client.connect(transport);
  const port = server.port;
  await server.kill();
  server = await startEverything(port);
  await waitFor(() => reports.length > 0, 'a recovery found by the GET stream', 20_000);
  assert.equal(reports[0]?.code, 'session-not-found', reports[0]?.error.message);
  assert.equal(reports[0]?.reinitializeError, undefined);
  const result = await client.callTool({ name: 'echo', arguments: { message: 'three' } });
  assert.match(JSON.stringify(result.content), /three/);
});
