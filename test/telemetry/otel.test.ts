/**
 * The OpenTelemetry SDK registered with in-memory exporters, and a scripted run over two
 * replicas sharing one store: a cut and resume (our client through a cutting proxy), a log
 * reset the client detects, two refusals, a drain, a takeover and a DELETE. Every named
 * metric and span has the count the script implies, and the hooks saw the same events.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { SpanKind } from '@opentelemetry/api';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ContinuityClientTransport, type DivergenceReport, type ReconnectEvent } from '../../src/client/index.js';
import { startChaosProxy, type ChaosProxy } from '../../src/chaos/proxy.js';
import { memoryStore } from '../../src/store/memory/index.js';
import { METRIC, type EndpointHooks } from '../../src/server/index.js';
import { startFixture, type Fixture } from '../helpers/fixture.js';
import { initialize, rpc, send, sessionHeaders } from '../helpers/sse-client.js';
import { registerOtel, type Otel } from '../helpers/otel.js';
import { waitFor } from '../helpers/wait.js';

type Seen = { [K in keyof EndpointHooks]-?: Array<Parameters<NonNullable<EndpointHooks[K]>>[0]> };
const seen = (): Seen => ({ onResume: [], onRefusal: [], onTakeover: [], onRebuild: [], onPassivation: [], onDrain: [] });
const hooks = (s: Seen): EndpointHooks => ({
  onResume: (e) => s.onResume.push(e),
  onRefusal: (e) => s.onRefusal.push(e),
  onTakeover: (e) => s.onTakeover.push(e),
  onRebuild: (e) => s.onRebuild.push(e),
  onPassivation: (e) => s.onPassivation.push(e),
  onDrain: (e) => s.onDrain.push(e),
});

let otel: Otel;
const store = memoryStore();
const r0seen = seen();
const r1seen = seen();
let r0: Fixture;
let r1: Fixture;
let proxy: ChaosProxy;

before(async () => {
  otel = registerOtel();
  // The proxy rewrites nothing: the Host guard is off. retry: 10 ms keeps the resume quick.
  const common = { store, retryMs: 10, keepAliveMs: 0, hostGuard: false as const };
  r0 = await startFixture({ ...common, cluster: { enabled: true, leaseMs: 300, replicaId: 'r0' }, ...hooks(r0seen) });
  r1 = await startFixture({ ...common, cluster: { enabled: true, leaseMs: 300, replicaId: 'r1' }, ...hooks(r1seen) });
  // One response per connection, so the proxy's cut lands on the tool call's stream alone.
  r0.listener.server.on('request', (_req, res) => {
    res.shouldKeepAlive = false;
  });
  proxy = await startChaosProxy({
    upstream: { host: '127.0.0.1', port: r0.listener.port },
    // Exactly one cut: 300 bytes into the first response that carries the tool's notifications.
    plan: () => (proxy.cuts === 0 ? { after: '"notifications/message"', cutAfterBytes: 300, mode: 'fin' } : {}),
  });
});

after(async () => {
  await proxy?.close();
  await r0?.close().catch(() => {});
  await r1?.close().catch(() => {});
  await otel?.close();
});

test('metrics, spans and hooks count a cut and resume, a divergence, refusals, a drain and a takeover', { timeout: 60_000 }, async () => {
  // 1. Our client through the proxy: the tool call's stream is cut once and resumed.
  const reconnects: ReconnectEvent[] = [];
  const divergences: DivergenceReport[] = [];
  const transport = new ContinuityClientTransport(new URL(`http://127.0.0.1:${proxy.port}/mcp`), {
    standaloneStream: false,
    reconnect: { initialDelayMs: 5, maxDelayMs: 50 },
    onReconnect: (e) => reconnects.push(e),
    onDivergence: (r) => divergences.push(r),
  });
  const client = new Client({ name: 'otel', version: '1.0.0' });
  await client.connect(transport);
  const firstSession = transport.sessionId as string;
  const result = await client.callTool({ name: 'emit', arguments: { count: 50 } });
  assert.deepEqual(result.structuredContent, { emitted: 50 });
  assert.equal(proxy.cuts, 1, 'the stream was cut once');

  // 2. The server declares the log lost: the client's next call sees a new epoch (a divergence).
  await r0.endpoint.resetReplayLog(firstSession);
  await assert.rejects(client.callTool({ name: 'emit', arguments: { count: 3 } }));
  // The report comes once the client has re-initialized.
  await waitFor(() => divergences.length === 1, 'the divergence report');
  await client.close();

  // 3. Two refusals on r0: a forged cursor (a refused resume) and an unknown session.
  const h = await initialize(r0.url);
  const forged = await send(r0.url, { headers: sessionHeaders(h, { 'last-event-id': 'not-an-event-id' }) });
  assert.equal(forged.status, 400);
  const unknown = await send(r0.url, { body: rpc('tools/list'), headers: { ...sessionHeaders(h), 'mcp-session-id': 'x'.repeat(32) } });
  assert.equal(unknown.status, 404);

  // 4. r0 drains: its sessions stay in the store, their leases are released.
  const held = r0.endpoint.sessionCount;
  await r0.close();
  assert.equal(r0.endpoint.draining, true);

  // 5. r1 takes h's session over on its next request, and the session is deleted there.
  const call = await send(r1.url, { body: rpc('tools/call', { name: 'emit', arguments: { count: 3 } }), headers: sessionHeaders(h) });
  assert.equal(call.status, 200, call.text);
  const deleted = await send(r1.url, { method: 'DELETE', headers: sessionHeaders(h) });
  assert.equal(deleted.status, 200);

  // The hooks saw each event once.
  assert.deepEqual(r0seen.onResume.map((e) => e.outcome).sort(), ['cursor-invalid', 'resumed']);
  assert.deepEqual(r0seen.onRefusal.map((e) => e.code).sort(), ['cursor-invalid', 'session-not-found']);
  assert.equal(r0seen.onRefusal.find((e) => e.code === 'cursor-invalid')?.sessionId, h.sessionId);
  assert.deepEqual(
    r0seen.onDrain.map((e) => [e.outcome, e.sessions, e.replicaId]),
    [['completed', held, 'r0']],
  );
  assert.deepEqual(
    r1seen.onTakeover.map((e) => [e.sessionId, e.replicaId]),
    [[h.sessionId, 'r1']],
  );
  assert.deepEqual(
    r1seen.onRebuild.map((e) => e.sessionId),
    [h.sessionId],
  );
  assert.equal(r1seen.onRefusal.length + r0seen.onTakeover.length + r0seen.onRebuild.length, 0);
  assert.deepEqual(
    reconnects.map((e) => [e.stream, e.outcome]),
    [['request', 'resumed']],
  );

  // The metrics count the same.
  const m = await otel.collect();
  assert.equal(m.count(METRIC.resumes, { 'mcp_continuity.outcome': 'resumed' }), 1);
  assert.equal(m.count(METRIC.resumes, { 'mcp_continuity.outcome': 'cursor-invalid' }), 1);
  assert.equal(m.count(METRIC.resumes), 2);
  assert.ok(m.count(METRIC.replayedEvents) >= 1, 'the events after the cut came from the log');
  assert.ok(m.count(METRIC.replayedBytes) > m.count(METRIC.replayedEvents));
  assert.equal(m.count(METRIC.refusals, { 'error.type': 'cursor-invalid', 'http.response.status_code': 400 }), 1);
  assert.equal(m.count(METRIC.refusals, { 'error.type': 'session-not-found', 'http.response.status_code': 404 }), 1);
  assert.equal(m.count(METRIC.refusals), 2);
  assert.equal(m.count(METRIC.takeovers), 1);
  assert.equal(m.count(METRIC.rebuilds), 1);
  assert.equal(m.count(METRIC.drains, { 'mcp_continuity.outcome': 'completed' }), 1);
  assert.equal(m.count(METRIC.reconnects, { 'mcp_continuity.outcome': 'resumed', 'mcp_continuity.stream': 'request' }), 1);
  assert.equal(m.count(METRIC.divergences, { 'error.type': 'epoch-changed' }), 1);
  assert.equal(m.count(METRIC.divergences), 1);
  // Operations: three tool calls ran on the servers (two from our client, one raw), two were sent by our client.
  const toolCall = { 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'emit', 'mcp.protocol.version': '2025-11-25' };
  assert.equal(m.count(METRIC.serverOperationDuration, toolCall), 3);
  assert.equal(m.count(METRIC.clientOperationDuration, { 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'emit' }), 2);
  assert.equal(m.count(METRIC.clientOperationDuration, { 'mcp.method.name': 'tools/call', 'error.type': 'epoch-changed' }), 1);
  assert.equal(m.count(METRIC.serverSessionDuration), 1, 'one session ended (the DELETE)');
  assert.equal(m.metric(METRIC.serverOperationDuration)?.descriptor.unit, 's');
  assert.ok(m.metric(METRIC.bufferedBytes), 'the buffered-bytes gauge is observed');

  // Spans: the client's span of the first call is the parent of the server's, through params._meta.
  const spans = otel.spans();
  const clientCalls = spans.filter((s) => s.kind === SpanKind.CLIENT && s.name === 'tools/call emit');
  assert.equal(clientCalls.length, 2);
  const first = clientCalls[0]!;
  const serverCalls = spans.filter((s) => s.kind === SpanKind.SERVER && s.name === 'tools/call emit');
  assert.equal(serverCalls.length, 3);
  const child = serverCalls.find((s) => s.parentSpanContext?.spanId === first.spanContext().spanId);
  assert.ok(child, 'the server span of the first call hangs under the client span');
  assert.equal(child.spanContext().traceId, first.spanContext().traceId);
  assert.equal(child.attributes['mcp.method.name'], 'tools/call');
  assert.equal(child.attributes['gen_ai.tool.name'], 'emit');
  assert.equal(child.attributes['mcp.session.id'], firstSession);
  assert.equal(child.attributes['mcp.protocol.version'], '2025-11-25');
  assert.equal(typeof child.attributes['jsonrpc.request.id'], 'string');
  assert.ok(spans.some((s) => s.kind === SpanKind.SERVER && s.name === 'initialize'));
});

test('a replica taking back a session it let go is a rebuild, not a takeover; taking one from another replica is', { timeout: 60_000 }, async () => {
  const shared = memoryStore();
  const a = seen();
  const b = seen();
  const options = { store: shared, keepAliveMs: 0, limits: { passivateAfterMs: 100 } };
  const e0 = await startFixture({ ...options, cluster: { enabled: true, leaseMs: 300, replicaId: 'e0' }, ...hooks(a) });
  const e1 = await startFixture({ ...options, cluster: { enabled: true, leaseMs: 300, replicaId: 'e1' }, ...hooks(b) });
  try {
    const h = await initialize(e0.url);
    const list = async (at: Fixture): Promise<void> => {
      const r = await send(at.url, { body: rpc('tools/list'), headers: sessionHeaders(h) });
      assert.equal(r.status, 200, r.text);
    };
    const passivated = (at: Fixture, s: Seen, n: number): Promise<unknown> =>
      waitFor(() => at.endpoint.sessionCount === 0 && s.onPassivation.length === n, `passivation ${n} on ${at.endpoint.replicaId}`);
    await passivated(e0, a, 1);
    await list(e1); // e1 takes the session from e0 (which let it go)
    await passivated(e1, b, 1);
    await list(e1); // e1 takes back its own: the same token
    await passivated(e1, b, 2);
    await list(e0); // e0 takes it from e1
    assert.deepEqual(
      b.onTakeover.map((e) => e.token),
      [2],
    );
    assert.deepEqual(
      a.onTakeover.map((e) => e.token),
      [3],
    );
    assert.equal(b.onRebuild.length, 2);
    assert.equal(a.onRebuild.length, 1);
  } finally {
    await e0.close();
    await e1.close();
  }
});

test('a write with a stale fencing token is counted as a fenced write', { timeout: 60_000 }, async () => {
  const shared = memoryStore();
  // Long leases: this replica does not renew (and notice the loss) before it writes.
  const e0 = await startFixture({ store: shared, keepAliveMs: 0, cluster: { enabled: true, leaseMs: 30_000, replicaId: 'e0' } });
  try {
    const h = await initialize(e0.url);
    const before = (await otel.collect()).count(METRIC.fencedWrites);
    // Another replica takes the session over behind e0's back (as after a pause past its lease).
    const lease = await shared.ownership.current(h.sessionId);
    assert.equal(lease?.owner, 'e0');
    await shared.ownership.release(h.sessionId, 'e0', lease.token);
    assert.equal((await shared.ownership.acquire(h.sessionId, 'elsewhere', 30_000)).owner, 'elsewhere');
    // e0's next write for the session carries the old token: the store refuses it.
    // (The request itself is then placed again; how it ends is the cluster's business, not this test's.)
    await send(e0.url, { body: rpc('tools/list'), headers: sessionHeaders(h) });
    assert.equal((await otel.collect()).count(METRIC.fencedWrites) - before, 1);
  } finally {
    await e0.close();
  }
});
