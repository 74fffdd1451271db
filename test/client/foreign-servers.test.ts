/**
 * Our `ContinuityClientTransport` (under the official SDK v1 `Client`) against servers
 * that are not ours:
 *
 * a. the official SDK v1 server (`McpServer` + `StreamableHTTPServerTransport`, opaque event
 *    IDs from an in-test EventStore): tools and progress work; a cut stream resumed on
 *    opaque IDs cannot be proven continuous, so by default the client reports
 *    `undetectable`, fails the in-flight call with that reason and re-initializes (seed
 *    000's posture) — with `trustOpaqueIds` the same cut resumes and the call succeeds;
 * b. a server with integer IDs (the faulty server in its healthy mode): a cut POST stream
 *    resumes, every event arrives once, no divergence (also when the first resumes get 409);
 * c. a 2026-07-28-style stateless server (no session, JSON only, GET 405): plain
 *    request/response, no divergence, no error, no GET retry loop;
 * d. a 404 for a session the server forgot: automatic re-initialization, the POST is sent
 *    again once, `session-not-found` with 0 failed requests.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startSdkServer } from '../helpers/faulty/sdk-server.js';
import { startFaultyServer } from '../helpers/faulty/server.js';
import { startStatelessServer } from '../helpers/faulty/stateless-server.js';
import { assertDeliveredOnce, assertRejectedWith, connectHarness, firstText, settle } from '../helpers/faulty/client.js';
import { waitFor } from '../helpers/wait.js';

/** A whole test's bound: one only a deadlock can miss (a loaded machine stretches these tests to seconds). */
const DEADLOCK_MS = 60_000;

test('a. official SDK v1 server: tools and progress through our transport', { timeout: DEADLOCK_MS }, async () => {
  const sdk = await startSdkServer();
  const h = await connectHarness(sdk.url);
  try {
    assert.equal(h.transport.sessionId, sdk.sessionIds[0], 'the SDK server assigned the session');
    const { tools } = await h.client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ['count', 'wait'], 'tools listed');
    const progress: number[] = [];
    const result = await h.client.callTool({ name: 'count', arguments: { n: 6 } }, undefined, { onprogress: (p) => progress.push(p.progress) });
    assert.equal(firstText(result), 'counted 6', 'tool result');
    assert.deepEqual(progress, [1, 2, 3, 4, 5, 6], 'every progress notification, once, in order');
    assert.ok(
      sdk.eventStore.events.every((e) => !/^\d+$/.test(e.id)),
      'the SDK server emitted opaque event IDs',
    );
    assert.deepEqual(h.reports, [], 'no divergence');
  } finally {
    await h.close();
    await sdk.close();
  }
});

test('a. control: the official SDK transport gets every progress notification from the same server', { timeout: DEADLOCK_MS }, async () => {
  const sdk = await startSdkServer();
  const client = new Client({ name: 'control', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(sdk.url);
  try {
    await client.connect(transport);
    const progress: number[] = [];
    const result = await client.callTool({ name: 'count', arguments: { n: 6 } }, undefined, { onprogress: (p) => progress.push(p.progress) });
    assert.equal(firstText(result), 'counted 6', 'tool result');
    assert.deepEqual(progress, [1, 2, 3, 4, 5, 6], 'the official transport delivers every progress notification');
  } finally {
    await client.close();
    await sdk.close();
  }
});

test(
  'a. official SDK v1 server, POST stream cut, default options: undetectable → in-flight call fails, re-initialized',
  { timeout: DEADLOCK_MS },
  async (t) => {
    const sdk = await startSdkServer();
    const h = await connectHarness(sdk.url);
    try {
      const oldSession = h.transport.sessionId;
      const progress: number[] = [];
      let resolveSeen!: () => void;
      const seen3 = new Promise<void>((r) => (resolveSeen = r));
      sdk.cutNext(3, seen3);
      const call = settle(
        h.client.callTool({ name: 'count', arguments: { n: 8 } }, undefined, {
          onprogress: (p) => {
            progress.push(p.progress);
            if (p.progress === 3) resolveSeen();
          },
        }),
      );
      const report = await h.nextDivergence();
      assertRejectedWith(await call, 'undetectable');
      assert.equal(report.code, 'undetectable', report.error.message);
      assert.equal(report.failedRequests, 1, 'the in-flight call was failed');
      assert.equal(report.previousSessionId, oldSession, 'old session named');
      assert.ok(report.sessionId !== undefined && report.sessionId !== oldSession, 'a new session');
      assert.equal(h.transport.sessionId, report.sessionId, 'the transport moved to it');
      assert.deepEqual(sdk.sessionIds, [oldSession, report.sessionId], 'the SDK server saw a second initialize');
      const resume = sdk.requests.find((r) => r.lastEventId !== undefined);
      assert.ok(resume?.lastEventId !== undefined && !/^\d+$/.test(resume.lastEventId), `resumed with an opaque Last-Event-ID (${resume?.lastEventId})`);
      assert.deepEqual(progress, [1, 2, 3], 'nothing after the unprovable resume reached the application');
      assert.equal(sdk.requests.filter((r) => r.rpc === 'tools/call').length, 1, 'the tools/call was not re-sent');

      const result = await h.client.callTool({ name: 'count', arguments: { n: 2 } });
      assert.equal(firstText(result), 'counted 2', 'a new call succeeds on the new session');
      assert.equal(sdk.toolRuns.count, 2, 'the tool ran once per call');
      assert.equal(h.reports.length, 1, 'onDivergence fired once');
      t.diagnostic(`undetectable: detectMs ${report.detectMs}, reinitializeMs ${report.reinitializeMs}`);
    } finally {
      await h.close();
      await sdk.close();
    }
  },
);

test('a. official SDK v1 server, POST stream cut, trustOpaqueIds: resumes and the call succeeds', { timeout: DEADLOCK_MS }, async () => {
  const sdk = await startSdkServer();
  const h = await connectHarness(sdk.url, { trustOpaqueIds: true });
  try {
    const session = h.transport.sessionId;
    const progress: number[] = [];
    let resolveSeen!: () => void;
    const seen3 = new Promise<void>((r) => (resolveSeen = r));
    sdk.cutNext(3, seen3);
    const result = await h.client.callTool({ name: 'count', arguments: { n: 8 } }, undefined, {
      onprogress: (p) => {
        progress.push(p.progress);
        if (p.progress === 3) resolveSeen();
      },
    });
    assert.equal(firstText(result), 'counted 8', 'the call completed across the cut');
    assert.deepEqual(progress, [1, 2, 3, 4, 5, 6, 7, 8], 'every progress notification once, in order');
    assert.ok(
      sdk.requests.some((r) => r.lastEventId !== undefined),
      'a resume happened',
    );
    assert.deepEqual(h.reports, [], 'no divergence');
    assert.equal(h.transport.sessionId, session, 'same session');
    assert.equal(sdk.sessionIds.length, 1, 'no re-initialization');
    assert.equal(sdk.toolRuns.count, 1, 'the tool ran once');
  } finally {
    await h.close();
    await sdk.close();
  }
});

test(
  'a. official SDK v1 server, standalone GET cut, default options: undetectable fails the in-flight call instead of hanging',
  { timeout: DEADLOCK_MS },
  async () => {
    const sdk = await startSdkServer();
    const h = await connectHarness(sdk.url);
    try {
      const oldSession = h.transport.sessionId;
      assert.ok(oldSession !== undefined, 'session');
      await waitFor(() => sdk.requests.some((r) => r.method === 'GET'), 'the standalone GET');
      const call = settle(h.client.callTool({ name: 'wait', arguments: {} })); // stays in flight
      await waitFor(() => sdk.toolRuns.wait === 1, 'the wait tool to start');
      await sdk.broadcast(oldSession, 2);
      await h.deliveredAtLeast(2);
      assert.ok(sdk.cutStandalone(oldSession), 'standalone socket found');
      await waitFor(() => sdk.requests.some((r) => r.method === 'GET' && r.lastEventId !== undefined), 'the standalone resume');
      await sdk.broadcast(oldSession, 1); // the probe after the resume: an opaque ID proves nothing
      const report = await h.nextDivergence();
      assert.equal(report.code, 'undetectable', report.error.message);
      assertRejectedWith(await call, 'undetectable');
      assert.equal(report.failedRequests, 1, 'the in-flight wait call was failed');
      assert.ok(report.sessionId !== undefined && report.sessionId !== oldSession, 're-initialized');
      assert.deepEqual(
        h.delivered.map((d) => d.seq),
        [1, 2],
        'the unprovable event was not delivered',
      );
      assertDeliveredOnce(h.delivered, ['sdk']);
      sdk.release();
      const result = await h.client.callTool({ name: 'count', arguments: { n: 1 } });
      assert.equal(firstText(result), 'counted 1', 'a new call succeeds');
      assert.equal(h.reports.length, 1, 'onDivergence fired once');
    } finally {
      await h.close();
      await sdk.close();
    }
  },
);

const RESUMES: Array<{ label: string; options: { replayBoundary?: boolean; conflictResumes?: number }; gets: Array<[string, number]> }> = [
  { label: 'healthy', options: {}, gets: [['3', 200]] },
  { label: 'healthy, replays the boundary event', options: { replayBoundary: true }, gets: [['3', 200]] },
  // A server that has not yet seen the cut connection close still holds the stream: the
  // client tries the same cursor again after its backoff, on the same session.
  {
    label: 'answers the first two resumes with 409',
    options: { conflictResumes: 2 },
    gets: [
      ['3', 409],
      ['3', 409],
      ['3', 200],
    ],
  },
];

for (const { label, options, gets } of RESUMES) {
  test(`b. integer-ID server (${label}): a cut POST stream resumes, every event once, no divergence`, { timeout: DEADLOCK_MS }, async () => {
    const server = await startFaultyServer({ name: 'A', ...options });
    const h = await connectHarness(server.url);
    try {
      const session = h.transport.sessionId;
      server.armCut({ after: 3, when: h.deliveredAtLeast(3) });
      const result = await h.client.callTool({ name: 'count', arguments: { n: 10 } });
      assert.equal(firstText(result), 'counted 10', 'the call completed across the cut');
      assert.deepEqual(
        h.delivered.map((d) => d.index),
        [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
        'all events, once, in order',
      );
      assertDeliveredOnce(h.delivered, ['A']);
      assert.deepEqual(
        server.gets(true).map((r) => [r.lastEventId, r.status]),
        gets,
        'the resumes, from Last-Event-ID 3',
      );
      assert.deepEqual(h.reports, [], 'no divergence');
      assert.equal(h.transport.sessionId, session, 'same session');
      assert.equal(server.initializeCount, 1, 'no re-initialization');
      assert.equal(server.toolRuns, 1, 'the tool ran once');
    } finally {
      await h.close();
      await server.close();
    }
  });
}

test('c. 2026-07-28-style stateless server: JSON only, no session, GET 405: works, no divergence, no GET loop', { timeout: DEADLOCK_MS }, async () => {
  const server = await startStatelessServer();
  // Reconnects without delay: a wrong GET retry loop then shows during the calls below,
  // however fast they are, instead of hiding behind a backoff longer than the test.
  const h = await connectHarness(server.url, { reconnect: { initialDelayMs: 0, maxDelayMs: 0 } });
  try {
    assert.equal(h.transport.sessionId, undefined, 'no session');
    const { tools } = await h.client.listTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      ['add'],
      'tools listed',
    );
    for (let i = 0; i < 3; i++) {
      const result = await h.client.callTool({ name: 'add', arguments: { a: i, b: 40 } });
      assert.equal(firstText(result), String(i + 40), `call ${i}`);
    }
    const gets = server.requests.filter((r) => r.method === 'GET');
    assert.ok(gets.length <= 1, `at most one GET (saw ${gets.length})`);
    assert.ok(
      server.requests.every((r) => r.sessionId === undefined),
      'no Mcp-Session-Id was ever sent',
    );
    assert.equal(server.toolRuns, 3, 'each call ran once');
    assert.deepEqual(h.reports, [], 'no divergence');
    assert.deepEqual(
      h.errors.map((e) => e.message),
      [],
      'no error raised',
    );
  } finally {
    await h.close();
    await server.close();
  }
});

test('d. 404 on a POST for a session the server forgot: re-initialize, send once more, session-not-found with 0 failed', { timeout: DEADLOCK_MS }, async () => {
  const server = await startFaultyServer({ name: 'A', sessions: 'strict' });
  const h = await connectHarness(server.url);
  try {
    const oldSession = h.transport.sessionId;
    // The standalone GET is open (and stays open): the POST is the first to hear of the loss.
    await waitFor(() => server.gets(false).length === 1, 'the standalone GET');
    server.forgetSessions();
    const result = await h.client.callTool({ name: 'count', arguments: { n: 3 } });
    assert.equal(firstText(result), 'counted 3', 'the call succeeded after re-initialization');
    const report = await h.nextDivergence();
    assert.equal(report.code, 'session-not-found', report.error.message);
    assert.equal(report.failedRequests, 0, 'nothing failed: the 404 means the server never ran it');
    assert.equal(report.previousSessionId, oldSession, 'old session named');
    assert.ok(report.sessionId !== undefined && report.sessionId !== oldSession, 'a new session');
    assert.equal(h.transport.sessionId, report.sessionId, 'the transport moved to it');
    const calls = server.requests.filter((r) => r.rpc === 'tools/call');
    assert.deepEqual(
      calls.map((c) => [c.status, c.sessionId === oldSession]),
      [
        [404, true],
        [200, false],
      ],
      'sent twice: refused on the old session, run on the new',
    );
    assert.equal(server.toolRuns, 1, 'the tool ran once');
    assert.equal(server.initializeCount, 2, 're-initialized once');
    assert.deepEqual(
      h.delivered.map((d) => d.index),
      [1, 2, 3],
      'its events, once',
    );
    assert.equal(h.reports.length, 1, 'onDivergence fired once');
  } finally {
    await h.close();
    await server.close();
  }
});

test('d′. a restart without sessions found by the standalone stream first: session-invalid, then calls work', { timeout: DEADLOCK_MS }, async () => {
  const server = await startFaultyServer({ name: 'A', sessions: 'strict' });
  const h = await connectHarness(server.url);
  try {
    const oldSession = h.transport.sessionId;
    await waitFor(() => server.gets(false).length === 1, 'the standalone GET');
    server.restart({ keepSessions: false, keepCounter: false });
    const report = await h.nextDivergence();
    assert.equal(report.code, 'session-invalid', report.error.message);
    assert.equal(report.failedRequests, 0, 'nothing was in flight');
    assert.ok(report.sessionId !== undefined && report.sessionId !== oldSession, 'a new session');
    assert.ok(
      server.gets(false).some((g) => g.status === 404 && g.sessionId === oldSession),
      'the standalone reconnect got 404',
    );
    const result = await h.client.callTool({ name: 'count', arguments: { n: 2 } });
    assert.equal(firstText(result), 'counted 2', 'a call after recovery succeeds');
    assert.equal(server.toolRuns, 1, 'the tool ran once');
    assert.equal(h.reports.length, 1, 'onDivergence fired once');
  } finally {
    await h.close();
    await server.close();
  }
});
