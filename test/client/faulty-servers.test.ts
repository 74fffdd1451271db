/**
 * Seed 000's three failure signatures, reproduced by hand-written faulty servers over real
 * sockets, against the official SDK v1 `Client` on our `ContinuityClientTransport`.
 * In every case the resume GET is answered `200 text/event-stream` with well-formed SSE —
 * and the client must still see that continuity is gone:
 *
 * a. gap with continuous IDs (persisted counter, emptied buffer) → `gap`;
 * b. session resurrection (the restarted server adopts the stale session ID) → `replay-reset`
 *    when it reuses the ID string, `session-invalid` when it answers under a new one;
 * c. silent downgrade to replay-from-zero (the resume lands on a replica that shares nothing)
 *    → `replay-reset`.
 *
 * Each time: `onDivergence` fires once with that code, the in-flight tool call is rejected
 * with an McpError whose `data.reason` is the code (never re-sent: the tool ran once), the
 * client re-initialized, a new call then succeeds (the tool ran twice), and no event reached
 * the application twice, nor any event of the restarted server's / other replica's junk.
 *
 * A control runs the same fixtures under the official SDK transport, which is fooled (it
 * hands the junk to the application), and one more test checks that a request whose POST
 * is still awaiting its response headers when a divergence is found is failed the same way.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { isDivergenceError } from '../../src/client/index.js';
import { startFaultyServer, type EventData, type FaultyServer } from '../helpers/faulty/server.js';
import { startSwitchProxy, type SwitchProxy } from '../helpers/faulty/proxy.js';
import { assertDeliveredOnce, assertRejectedWith, connectHarness, firstText, settle, type Harness } from '../helpers/faulty/client.js';
import { waitFor } from '../helpers/wait.js';

/** A whole test's bound: one only a deadlock can miss (a loaded machine stretches these tests to seconds). */
const DEADLOCK_MS = 60_000;

const CUT_AFTER = 3;
const N = 10;

interface Expectation {
  code: 'gap' | 'replay-reset' | 'session-invalid';
  /** The server whose tool ran (side effects), and which re-initialization reaches. */
  server: FaultyServer;
  /** Origins whose events may legitimately reach the application. */
  origins: string[];
}

/**
 * Calls `count` with a cut armed, waits for the divergence, then checks everything seed
 * 000 asks for; then a new call must succeed on the new session.
 */
async function divergesThenRecovers(h: Harness, expect: Expectation): Promise<void> {
  const { server, code } = expect;
  const oldSession = h.transport.sessionId;
  assert.ok(oldSession !== undefined, 'the client has a session before the fault');
  assert.equal(server.initializeCount, 1, 'one initialize before the fault');

  const call = settle(h.client.callTool({ name: 'count', arguments: { n: N } }));
  const report = await h.nextDivergence();
  const outcome = await call;

  // The in-flight call failed with the divergence, as an McpError the SDK raised.
  const data = assertRejectedWith(outcome, code);
  assert.equal(report.code, code, `onDivergence code: ${report.error.message}`);
  assert.ok(isDivergenceError(report.error, code), `report.error is a DivergenceError(${code})`);
  assert.equal(report.failedRequests, 1, 'exactly the in-flight tools/call was failed');
  assert.equal(report.previousSessionId, oldSession, 'report names the lost session');
  assert.ok(report.sessionId !== undefined, `re-initialized (reinitializeError: ${report.reinitializeError?.message})`);
  assert.equal(report.reinitializeError, undefined, 'no re-initialization error');
  assert.equal(h.transport.sessionId, report.sessionId, 'the transport runs on the new session');
  assert.ok(report.detectMs >= 0, `detectMs ${report.detectMs}`);

  // Never silently re-sent: the tool body ran once, one tools/call reached a server.
  assert.equal(server.toolRuns, 1, 'the tool ran exactly once');
  assert.equal(server.requests.filter((r) => r.rpc === 'tools/call').length, 1, 'the tools/call was not re-POSTed');
  // A new initialize reached the server, with the transport's own request id.
  assert.equal(server.initializeCount, 2, 'a second initialize reached the server');
  const reinit = server.requests.filter((r) => r.rpc === 'initialize').at(-1);
  assert.match(String(reinit?.rpcId), /^mcp-continuity\/reinitialize\/\d+$/, 'the re-initialize carries the transport id');

  // What was delivered before the cut stays, once; nothing after it.
  assert.deepEqual(
    h.delivered.map((d) => d.index),
    [1, 2, 3],
    'exactly the events before the cut were delivered',
  );
  assertDeliveredOnce(h.delivered, expect.origins);

  // The client recovered: a new call succeeds, with all its events, once.
  const before = h.delivered.length;
  const result = await h.client.callTool({ name: 'count', arguments: { n: 4 } });
  assert.equal(firstText(result), 'counted 4', 'the new call succeeds');
  assert.equal(server.toolRuns, 2, 'the new call ran the tool once more');
  assert.deepEqual(
    h.delivered.slice(before).map((d) => d.index),
    [1, 2, 3, 4],
    'the new call delivered its events',
  );
  assertDeliveredOnce(h.delivered, expect.origins);
  assert.equal(h.reports.length, 1, `onDivergence fired once: ${h.reports.map((r) => r.code).join(',')}`);
  // data of the McpError carries the verdict's detail too.
  if (code === 'gap') assert.deepEqual([data.expectedSeq, data.actualSeq], [CUT_AFTER + 1, report.error.detail?.actualSeq], 'gap detail on the wire');
}

/** One signature's fixture: the server(s), the URL the client uses, and how to arm the fault. */
interface Signature {
  url: URL;
  /** The server whose tool runs and which re-initialization reaches. */
  main: FaultyServer;
  /** Arms the fault on the next `count` call, to strike once `when` resolves (the client saw the events before the cut). */
  arm(when: Promise<unknown>): void;
  close(): Promise<void>;
}

const LOST = 4;

/** a. The counter persisted, the buffer did not; events K+1..K+m were produced and lost. */
async function gapSignature(): Promise<Signature> {
  const server = await startFaultyServer({ name: 'A' });
  return {
    url: server.url,
    main: server,
    arm: (when) => server.armCut({ after: CUT_AFTER, when, lostEvents: LOST, restart: { keepSessions: true, keepCounter: true } }),
    close: () => server.close(),
  };
}

/** b. The restarted server adopts the stale session ID, reusing the string or under a new one. */
async function resurrectionSignature(resurrect: 'same-id' | 'fresh-id'): Promise<Signature> {
  const server = await startFaultyServer({ name: 'A', sessions: 'permissive', resurrect, initializeAnswer: resurrect === 'fresh-id' ? 'sse' : 'json' });
  return {
    url: server.url,
    main: server,
    arm: (when) => server.armCut({ after: CUT_AFTER, when, restart: { keepSessions: false, keepCounter: false } }),
    close: () => server.close(),
  };
}

/** c. Two replicas behind a balancer that sends the resume to B, which shares nothing with A. */
async function downgradeSignature(): Promise<Signature & { b: FaultyServer; proxy: SwitchProxy }> {
  const a = await startFaultyServer({ name: 'A', sessions: 'strict' });
  const b = await startFaultyServer({ name: 'B', sessions: 'permissive', resurrect: 'same-id' });
  // Everything goes to A, except a resume (GET with Last-Event-ID), which lands on B.
  const proxy = await startSwitchProxy({ A: a.url, B: b.url }, (req) => (req.method === 'GET' && req.headers['last-event-id'] !== undefined ? 'B' : 'A'));
  return {
    url: proxy.url,
    main: a,
    b,
    proxy,
    arm: (when) => a.armCut({ after: CUT_AFTER, when }),
    async close() {
      await proxy.close();
      await a.close();
      await b.close();
    },
  };
}

test('a. gap with continuous IDs: persisted counter, emptied buffer → gap', { timeout: DEADLOCK_MS }, async (t) => {
  const sig = await gapSignature();
  const server = sig.main;
  const h = await connectHarness(sig.url);
  try {
    sig.arm(h.deliveredAtLeast(CUT_AFTER));
    await divergesThenRecovers(h, { code: 'gap', server, origins: ['A'] });
    const resume = server.gets(true)[0];
    assert.equal(resume?.lastEventId, String(CUT_AFTER), 'the resume sent Last-Event-ID of the last event seen');
    assert.equal(resume?.status, 200, 'the faulty server answered the resume 200');
    assert.equal(resume?.generation, 1, 'the restarted process answered');
    const report = h.reports[0];
    assert.ok(isDivergenceError(report?.error, 'gap'), 'gap report');
    // Events K+1..K+m were lost; the resumed stream continued the counter at K+m+1.
    assert.deepEqual([report.error.verdict.expectedSeq, report.error.verdict.actualSeq], [CUT_AFTER + 1, CUT_AFTER + LOST + 1], 'gap bounds');
    t.diagnostic(`gap: detectMs ${report.detectMs}, reinitializeMs ${report.reinitializeMs}`);
  } finally {
    await h.close();
    await sig.close();
  }
});

test('b. session resurrection: a restarted server adopts the stale session ID (same string) → replay-reset', { timeout: DEADLOCK_MS }, async (t) => {
  const sig = await resurrectionSignature('same-id');
  const server = sig.main;
  const h = await connectHarness(sig.url);
  try {
    const oldSession = h.transport.sessionId;
    sig.arm(h.deliveredAtLeast(CUT_AFTER));
    await divergesThenRecovers(h, { code: 'replay-reset', server, origins: ['A'] });
    const resume = server.gets(true)[0];
    assert.equal(resume?.status, 200, 'the stale session was accepted with 200');
    assert.equal(resume?.sessionId, oldSession, 'with the stale session ID');
    assert.equal(resume?.generation, 1, 'by the restarted process');
    const report = h.reports[0];
    assert.ok(isDivergenceError(report?.error, 'replay-reset'), 'replay-reset report');
    assert.equal(report.error.verdict.cause, 'behind', 'the fresh stream started behind the checkpoint');
    assert.deepEqual([report.error.verdict.lastSeq, report.error.verdict.actualSeq], [CUT_AFTER, 1], 'from id 1 after id 3');
    t.diagnostic(`resurrection (same id): observed ${report.code}, detectMs ${report.detectMs}, reinitializeMs ${report.reinitializeMs}`);
  } finally {
    await h.close();
    await sig.close();
  }
});

test('b′. session resurrection under a new session ID (initialize answered as SSE) → session-invalid', { timeout: DEADLOCK_MS }, async (t) => {
  const sig = await resurrectionSignature('fresh-id');
  const h = await connectHarness(sig.url);
  try {
    sig.arm(h.deliveredAtLeast(CUT_AFTER));
    await divergesThenRecovers(h, { code: 'session-invalid', server: sig.main, origins: ['A'] });
    const report = h.reports[0];
    assert.ok(isDivergenceError(report?.error, 'session-invalid'), 'session-invalid report');
    assert.equal(report.error.verdict.cause, 'session-changed', 'the echo named another session');
    t.diagnostic(`resurrection (fresh id): observed ${report.code}, detectMs ${report.detectMs}, reinitializeMs ${report.reinitializeMs}`);
  } finally {
    await h.close();
    await sig.close();
  }
});

test('c. silent downgrade to replay-from-zero: the resume lands on a replica that shares nothing → replay-reset', { timeout: DEADLOCK_MS }, async (t) => {
  const sig = await downgradeSignature();
  const { main: a, b, proxy } = sig;
  const h = await connectHarness(sig.url);
  try {
    sig.arm(h.deliveredAtLeast(CUT_AFTER));
    await divergesThenRecovers(h, { code: 'replay-reset', server: a, origins: ['A'] });
    const resumes = proxy.routed.filter((r) => r.lastEventId !== undefined);
    assert.deepEqual(
      resumes.map((r) => [r.target, r.lastEventId]),
      [['B', String(CUT_AFTER)]],
      'one resume, and it landed on B',
    );
    assert.equal(b.gets(true)[0]?.status, 200, 'B answered the unknown cursor with 200');
    assert.ok(b.junkSeqs.length > 0, 'B started a fresh stream of its own');
    assert.equal(b.toolRuns, 0, 'B never ran the tool');
    assert.equal(b.initializeCount, 0, 'B saw no initialize');
    assert.ok(
      h.delivered.every((d) => d.origin === 'A'),
      "none of B's events reached the application",
    );
    const report = h.reports[0];
    assert.ok(isDivergenceError(report?.error, 'replay-reset'), 'replay-reset report');
    assert.deepEqual([report.error.verdict.lastSeq, report.error.verdict.actualSeq], [CUT_AFTER, 1], 'B restarted from id 1');
    t.diagnostic(`replay-from-zero: detectMs ${report.detectMs}, reinitializeMs ${report.reinitializeMs}`);
  } finally {
    await h.close();
    await sig.close();
  }
});

/**
 * Control: the same fixtures fool a client that trusts 200 + text/event-stream — the
 * official SDK transport, which resumes POST streams with Last-Event-ID but checks nothing —
 * so the tests above measure our client, not a fixture that fails loudly by itself.
 */
test('control: the official SDK transport hands the junk of all three signatures to the application', { timeout: DEADLOCK_MS }, async (t) => {
  for (const [name, make] of [
    ['gap', gapSignature],
    ['resurrection', () => resurrectionSignature('same-id')],
    ['replay-from-zero', downgradeSignature],
  ] as const) {
    const sig = await make();
    const client = new Client({ name: 'control', version: '1.0.0' });
    const delivered: EventData[] = [];
    let seen!: () => void;
    const seenCut = new Promise<void>((r) => (seen = r));
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      delivered.push(n.params.data as EventData);
      if (delivered.length === CUT_AFTER) seen();
    });
    const transport = new StreamableHTTPClientTransport(sig.url, {
      reconnectionOptions: { initialReconnectionDelay: 10, maxReconnectionDelay: 50, reconnectionDelayGrowFactor: 1, maxRetries: 2 },
    });
    try {
      await client.connect(transport);
      sig.arm(seenCut);
      // The call can never complete (its result was lost with the stream): bounded by a timeout.
      const call = settle(client.callTool({ name: 'count', arguments: { n: N } }, undefined, { timeout: 400 }));
      await waitFor(
        () => delivered.some((d) => d.junk === true),
        () => `${name}: the official transport to deliver junk events: ${JSON.stringify(delivered)}`,
      );
      const outcome = await call;
      assert.ok(!outcome.ok, `${name}: the call never completes`);
      t.diagnostic(`${name}: official transport delivered ${delivered.filter((d) => d.junk === true).length} junk event(s), then the call timed out`);
    } finally {
      await client.close();
      await sig.close();
    }
  }
});

/**
 * Not one of seed 000's signatures, but its recovery contract: a request whose POST is
 * still waiting for its response headers when another stream finds the divergence is in
 * flight too, and must be failed like the others — with the divergence's reason, not an
 * untyped abort the application cannot tell from a network error.
 */
test('a request whose POST is in flight when the standalone stream finds a divergence fails with the divergence reason', { timeout: DEADLOCK_MS }, async () => {
  const server = await startFaultyServer({ name: 'A', sessions: 'strict' });
  const h = await connectHarness(server.url);
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  try {
    await waitFor(() => server.gets(false).length === 1, 'the standalone GET');
    server.holdNextCall(held);
    const call = settle(h.client.callTool({ name: 'count', arguments: { n: 2 } }));
    await waitFor(() => server.requests.some((r) => r.rpc === 'tools/call'), 'the tools/call to reach the server');
    // The server loses the session; the standalone stream's reconnect is the first to hear (404).
    server.forgetSessions();
    assert.equal(server.cutStandalone(), 1, 'one standalone stream cut');
    const report = await h.nextDivergence();
    assert.equal(report.code, 'session-invalid', report.error.message);
    const outcome = await call;
    assertRejectedWith(outcome, 'session-invalid');
    assert.equal(report.failedRequests, 1, 'the held tools/call counts as failed');
    assert.equal(server.requests.filter((r) => r.rpc === 'tools/call').length, 1, 'the tools/call was not re-sent');
  } finally {
    release();
    await h.close();
    await server.close();
  }
});
