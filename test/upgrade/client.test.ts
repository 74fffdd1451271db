/**
 * The client side of the SSE→WebSocket upgrade (DESIGN §5, seed 003), with the official
 * SDK v1 `Client` on `ContinuityClientTransport`:
 *  1. end to end over the upgraded connection (progress, logging, sampling), and the SSE
 *     side of the session is over (a POST now supersedes the session);
 *  2. cuts at every phase through the chaos proxy: inside the `upgrade-accepted` event
 *     (seed 003's window), before the 101, inside it, right after it, and inside a frame
 *     while a call is answering. Each ends in bounded time: the call in flight fails with
 *     `session-superseded` (never hangs, never re-sent), `onDivergence` says so, the client
 *     moves to a new session that works (upgraded again), the old session is gone, and no
 *     event is ever delivered twice;
 *  3. calls the application makes while the session is switching transports.
 * Offsets come from a seeded PRNG (UPGRADE_CLIENT_SEED); every failure message names it.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect as netConnect } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CreateMessageRequestSchema, LoggingMessageNotificationSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { ContinuityClientTransport, type DivergenceReport } from '../../src/client/index.js';
import { startChaosProxy, type ChaosProxy, type ConnectionPlan } from '../../src/chaos/proxy.js';
import { createExampleServer } from '../../src/example/index.js';
import type { JsonRpcMessage } from '../../src/protocol/index.js';
import type { SdkServerLike, SessionContext } from '../../src/server/index.js';
import { startFixture, type Fixture } from '../helpers/fixture.js';
import { initialize, rpc, send, sessionHeaders } from '../helpers/sse-client.js';
import { prng } from '../helpers/stream-server.js';
import { waitFor, within } from '../helpers/wait.js';

const SEED = Number(process.env.UPGRADE_CLIENT_SEED ?? 20261129);
const UPGRADE_ACCEPTED = 'notifications/mcp-continuity/upgrade-accepted';
/** Every phase must end within this: a deadlock shows up as a failed bound, not a hung run. */
const BOUND_MS = 30_000;

// ---------------------------------------------------------------------------------------
// Helpers

/** What a promise came to, without throwing. */
async function settle<T>(promise: Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
  try {
    return { ok: true, value: await promise };
  } catch (error) {
    return { ok: false, error };
  }
}

function reasonOf(error: unknown): unknown {
  return error instanceof McpError ? (error.data as { reason?: unknown } | undefined)?.reason : undefined;
}

/** `tools/call` of `emit` as the server received them, per session (request ids). */
type EmitRuns = Map<string, unknown[]>;

/** The example server, counting the `emit` calls that reach it (over HTTP or the socket). */
function countingServer(runs: EmitRuns): (context: SessionContext) => SdkServerLike {
  return ({ sessionId }) => {
    const server = createExampleServer();
    return {
      async connect(transport: never) {
        await server.connect(transport);
        const t = transport as { onmessage?: (message: JsonRpcMessage, extra?: unknown) => void };
        const inner = t.onmessage;
        t.onmessage = (message, extra) => {
          const m = message as { method?: string; id?: unknown; params?: { name?: unknown } };
          if (m.method === 'tools/call' && m.params?.name === 'emit') runs.set(sessionId, [...(runs.get(sessionId) ?? []), m.id]);
          inner?.(message, extra);
        };
      },
      close: () => server.close(),
    };
  };
}

/** Byte lengths measured once on a clean upgrade, to place cuts exactly. */
interface Measured {
  /** The server's `101 Switching Protocols` head, up to and including the blank line. */
  head101: number;
  /** The offer's SSE event from the start of `upgrade-accepted` in its data to its end (`\n\n`). */
  offerTail: number;
}

/** Measures a clean upgrade: the offer over the raw SSE client, the handshake over a raw socket. */
async function measureClean(f: Fixture): Promise<Measured> {
  const h = await initialize(f.url);
  const offered = await send(f.url, {
    headers: sessionHeaders(h, { 'x-mcp-upgrade': 'websocket' }),
    cutWhen: (e) => e.data.includes(UPGRADE_ACCEPTED),
    timeoutMs: BOUND_MS,
  });
  const offer = offered.events
    .map((e) => (e.data ? (JSON.parse(e.data) as { method?: string; params?: { token?: string } }) : {}))
    .find((m) => m.method === UPGRADE_ACCEPTED);
  const token = offer?.params?.token;
  assert.ok(token, 'measuring the 101: the offer carries a token');
  const markerAt = offered.text.indexOf('upgrade-accepted');
  const eventEnd = offered.text.indexOf('\n\n', markerAt);
  assert.ok(markerAt >= 0 && eventEnd > markerAt, `measuring the offer event: ${JSON.stringify(offered.text.slice(0, 300))}`);
  const offerTail = Buffer.byteLength(offered.text.slice(markerAt, eventEnd + 2));
  const socket = netConnect(Number(f.url.port), f.url.hostname);
  try {
    const head = await new Promise<string>((resolve, reject) => {
      let bytes = '';
      socket.on('error', reject);
      socket.on('data', (chunk: Buffer) => {
        bytes += chunk.toString('latin1');
        const end = bytes.indexOf('\r\n\r\n');
        if (end >= 0) resolve(bytes.slice(0, end + 4));
      });
      socket.write(
        `GET ${f.url.pathname} HTTP/1.1\r\nHost: ${f.url.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: mcp.v1\r\n' +
          `Mcp-Session-Id: ${h.sessionId}\r\nX-MCP-Upgrade-Token: ${token}\r\n\r\n`,
      );
    });
    assert.ok(head.startsWith('HTTP/1.1 101'), `measuring the 101: got ${JSON.stringify(head.slice(0, 40))}`);
    return { head101: Buffer.byteLength(head, 'latin1'), offerTail };
  } finally {
    socket.destroy();
  }
}

interface Delivered {
  session: string | undefined;
  seq: number;
}

interface Harness {
  proxy: ChaosProxy | undefined;
  transport: ContinuityClientTransport;
  client: Client;
  reports: DivergenceReport[];
  /** Every `emit` log notification the SDK Client got, with the session it came in. */
  delivered: Delivered[];
  /** Every HTTP request the transport made (method and the start of the body). */
  fetches: string[];
  close(): Promise<void>;
}

/** An SDK v1 Client on our transport with the upgrade on, optionally through a chaos proxy. */
async function openClient(f: Fixture, plan?: (proxy: ChaosProxy) => ConnectionPlan): Promise<Harness> {
  let proxy: ChaosProxy | undefined;
  let url = f.url;
  if (plan) {
    const started = await startChaosProxy({ upstream: { host: '127.0.0.1', port: f.listener.port }, plan: () => plan(started) });
    proxy = started;
    url = new URL(`http://127.0.0.1:${started.port}${f.url.pathname}`);
  }
  const reports: DivergenceReport[] = [];
  const delivered: Delivered[] = [];
  const fetches: string[] = [];
  const transport = new ContinuityClientTransport(url, {
    upgrade: { websocket: true },
    reconnect: { initialDelayMs: 5, maxDelayMs: 50 },
    onDivergence: (r) => reports.push(r),
    fetch: (u, init) => {
      fetches.push(`${init.method ?? 'GET'} ${typeof init.body === 'string' ? init.body.slice(0, 60) : ''}`);
      return fetch(u, init);
    },
  });
  const client = new Client({ name: 'upgrade-client-test', version: '1.0.0' }, { capabilities: { sampling: {} } });
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => ({
    model: 'test-model',
    role: 'assistant',
    content: { type: 'text', text: `sampled: ${JSON.stringify(request.params.messages[0]?.content)}` },
  }));
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    const data = n.params.data as { seq?: unknown } | undefined;
    if (n.params.logger === 'emit' && typeof data?.seq === 'number') delivered.push({ session: transport.sessionId, seq: data.seq });
  });
  await within(client.connect(transport), 'connect', BOUND_MS);
  return {
    proxy,
    transport,
    client,
    reports,
    delivered,
    fetches,
    async close() {
      await client.close().catch(() => {});
      await proxy?.close();
    },
  };
}

/** No (session, seq) pair delivered twice: never an event on two transports. */
function assertNoDuplicates(delivered: Delivered[], context: string): void {
  const seen = new Set<string>();
  const twice: string[] = [];
  for (const d of delivered) {
    const key = `${String(d.session)}#${d.seq}`;
    if (seen.has(key)) twice.push(key);
    seen.add(key);
  }
  assert.deepEqual(twice, [], `${context}: events delivered twice`);
}

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1);

// ---------------------------------------------------------------------------------------
// 1. End to end

describe('SDK v1 Client end to end over the upgraded connection', () => {
  let f: Fixture;
  const runs: EmitRuns = new Map();
  before(async () => {
    f = await startFixture({ server: countingServer(runs), upgrade: { websocket: true }, keepAliveMs: 0 });
  });
  after(() => f.close());

  test('progress, logging and sampling over the socket; the SSE side of the session is over', { timeout: 15_000 }, async () => {
    const h = await openClient(f);
    try {
      await waitFor(() => h.transport.upgraded, 'the transport to upgrade', BOUND_MS);
      const sessionId = h.transport.sessionId as string;
      assert.ok(sessionId, 'a session id');
      const httpBefore = h.fetches.length;

      const N = 40;
      const progress: number[] = [];
      const result = await within(
        h.client.callTool({ name: 'emit', arguments: { count: N } }, undefined, { onprogress: (p) => progress.push(p.progress) }),
        'emit over the socket',
        BOUND_MS,
      );
      assert.deepEqual(result.structuredContent, { emitted: N }, 'the emit result');
      assert.deepEqual(progress, range(N), 'progress 1..N, once each, in order');
      await waitFor(() => h.delivered.length >= N, 'the logging notifications', BOUND_MS);
      assert.deepEqual(
        h.delivered.map((d) => d.seq),
        range(N),
        'logging notifications 1..N, once each, in order',
      );
      assert.ok(
        h.delivered.every((d) => d.session === sessionId),
        'all in the one session',
      );

      const sampled = await within(h.client.callTool({ name: 'test_sampling', arguments: { prompt: 'ping?' } }), 'sampling round trip', BOUND_MS);
      const text = (sampled.content as Array<{ type: string; text?: string }>)[0]?.text ?? '';
      assert.match(text, /^LLM response: sampled: .*ping\?/, 'the sampling answer came back through the tool');

      assert.equal(h.transport.upgraded, true, 'still upgraded');
      assert.equal(h.transport.sessionId, sessionId, 'same session throughout');
      assert.deepEqual(h.fetches.slice(httpBefore), [], 'no HTTP request after the upgrade: calls, progress and sampling went over the socket');
      assert.equal(runs.get(sessionId)?.length, 1, 'emit ran once on the server');
      assert.equal(h.reports.length, 0, `no divergence: ${JSON.stringify(h.reports.map((r) => r.code))}`);

      // Last, as it ends the session: a POST on the SSE side now supersedes it (never two
      // live transports), the socket closes, and the client moves to a new session.
      const post = await send(f.url, { body: rpc('tools/list'), headers: { 'mcp-session-id': sessionId }, timeoutMs: BOUND_MS });
      assert.equal(post.status, 410, 'a POST after the upgrade: 410');
      assert.equal((post.json() as { error?: { data?: { reason?: string } } }).error?.data?.reason, 'session-superseded', 'reason session-superseded');
      await waitFor(() => h.reports.length > 0, 'the client to notice the superseded session', BOUND_MS);
      const [report] = h.reports;
      assert.equal(report?.code, 'session-superseded', 'reported as session-superseded');
      assert.equal(report?.previousSessionId, sessionId, 'for the old session');
      assert.ok(report?.sessionId && report.sessionId !== sessionId, 'onto a new session');
      assert.equal(await f.endpoint.store.sessions.get(sessionId), undefined, 'the old session is gone');
      assert.equal((await send(f.url, { body: rpc('tools/list'), headers: { 'mcp-session-id': sessionId } })).status, 404, 'later requests for it get 404');
      await waitFor(() => h.transport.upgraded, 'the new session to upgrade too', BOUND_MS);
      const again = await within(h.client.callTool({ name: 'emit', arguments: { count: 3 } }), 'a call on the new session', BOUND_MS);
      assert.deepEqual(again.structuredContent, { emitted: 3 }, 'the new session works');
      assertNoDuplicates(h.delivered, 'end to end');
    } finally {
      await h.close();
    }
  });
});

// ---------------------------------------------------------------------------------------
// 2. Cuts at every phase

type Phase = 'inside-offer' | 'before-101' | 'inside-101' | 'after-101' | 'mid-frame';

interface Cut {
  phase: Phase;
  mode: 'fin' | 'rst';
  /** The proxy plan of every connection until the first cut; only the targeted exchange carries its marker. */
  plan: ConnectionPlan;
  /** Mid-frame: the size of the call in flight, and the frame the cut lands in (when known). */
  count?: number;
  frame?: number;
  /** Mid-frame placed from the 101: bytes past its head (`cutAfterBytes` = head + this). */
  pastHead?: number;
  label: string;
}

describe(`cuts at every phase of the upgrade (seed ${SEED})`, () => {
  let f: Fixture;
  let measured: Measured = { head101: 0, offerTail: 0 };
  const runs: EmitRuns = new Map();
  const rand = prng(SEED);
  before(async () => {
    // A proxy in front changes the Host port: no loopback guard.
    f = await startFixture({ server: countingServer(runs), upgrade: { websocket: true }, keepAliveMs: 0, hostGuard: false });
    // One response per connection, so a connection's plan applies to one exchange.
    f.listener.server.on('request', (_q, res) => {
      res.shouldKeepAlive = false;
    });
    measured = await measureClean(f);
  });
  after(() => f.close());

  async function runCut(cut: Cut): Promise<void> {
    const context = `${cut.label} ${JSON.stringify(cut.plan)} (seed ${SEED})`;
    // Once the cut happened, every later connection (re-initialization, the next upgrade)
    // passes through untouched.
    const h = await openClient(f, (proxy) => (proxy.cuts > 0 ? {} : cut.plan));
    try {
      let oldId: string | undefined;
      let cutCallId: unknown;
      if (cut.phase === 'mid-frame') {
        const count = cut.count as number;
        await waitFor(() => h.transport.upgraded, `${context}: the first upgrade`, BOUND_MS);
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- the assertion narrows the let for the code below; tsc needs it
        oldId = h.transport.sessionId as string;
        const progress: number[] = [];
        const outcome = await within(
          settle(h.client.callTool({ name: 'emit', arguments: { count } }, undefined, { onprogress: (p) => progress.push(p.progress) })),
          `${context}: the call in flight at the cut`,
          BOUND_MS,
        );
        assert.equal(outcome.ok, false, `${context}: the call cut mid-frame cannot succeed: ${JSON.stringify(outcome)}`);
        if (!outcome.ok) {
          assert.ok(outcome.error instanceof McpError, `${context}: an McpError, got ${String(outcome.error)}`);
          assert.equal(reasonOf(outcome.error), 'session-superseded', `${context}: data.reason of ${String(outcome.error)}`);
        }
        assert.equal(runs.get(oldId)?.length, 1, `${context}: the cut call ran once, on the old session`);
        cutCallId = runs.get(oldId)?.[0];
        // What reached the client before the cut arrived once, in order, and nothing after it.
        const old = h.delivered.filter((d) => d.session === oldId).map((d) => d.seq);
        assert.deepEqual(old, range(old.length), `${context}: the old session's logs are a gapless prefix`);
        assert.ok(
          old.length < count && progress.length < count,
          `${context}: cut while frames were flowing (${old.length} logs, ${progress.length} progress of ${count})`,
        );
        assert.deepEqual(progress, range(progress.length), `${context}: progress is a gapless prefix`);
        if (cut.frame !== undefined) {
          // Frame `frame` was cut in its payload: its log (and everything after) never arrived.
          assert.ok(old.length <= cut.frame - 1, `${context}: no log at or after the cut frame (${old.length})`);
          // With FIN every byte before the cut is delivered: exactly the frames before it.
          if (cut.mode === 'fin') assert.equal(old.length, cut.frame - 1, `${context}: every complete frame before the cut arrived`);
        }
      }
      await waitFor(() => h.reports.length > 0, `${context}: onDivergence`, BOUND_MS);
      const report = h.reports[0] as DivergenceReport;
      oldId ??= report.previousSessionId as string;
      assert.equal(h.proxy?.cuts, 1, `${context}: the proxy cut once`);
      assert.equal(report.code, 'session-superseded', `${context}: reported code (${report.error.message})`);
      assert.equal(report.previousSessionId, oldId, `${context}: the report names the old session`);
      assert.ok(report.sessionId && report.sessionId !== oldId, `${context}: re-initialized onto a new session (${String(report.sessionId)})`);
      assert.equal(report.reinitializeError, undefined, `${context}: re-initialization succeeded`);
      assert.equal(report.failedRequests, cut.phase === 'mid-frame' ? 1 : 0, `${context}: failed requests`);
      if (cut.phase === 'inside-offer') {
        // Refused by the server (410), not a socket failure: the client never got the offer.
        assert.doesNotMatch(report.error.message, /^WebSocket /, `${context}: the client never had the offer (${report.error.message})`);
      } else if (cut.phase !== 'mid-frame' && !(cut.phase === 'after-101' && cut.mode === 'rst')) {
        // (An RST may discard bytes the client had not read yet, so only FIN pins this down.)
        const opened = /^WebSocket closed \(/.test(report.error.message);
        assert.equal(
          opened,
          cut.phase === 'after-101',
          `${context}: the client ${cut.phase === 'after-101' ? 'saw' : 'never saw'} the 101 (${report.error.message})`,
        );
      }
      const newId = report.sessionId;

      // The next call succeeds within the bound, on the new session, upgraded again.
      await waitFor(() => h.transport.upgraded, `${context}: the new session to upgrade`, BOUND_MS);
      assert.equal(h.transport.sessionId, newId, `${context}: the transport is on the new session`);
      const M = 5;
      const next = await within(h.client.callTool({ name: 'emit', arguments: { count: M } }), `${context}: the next call`, BOUND_MS);
      assert.deepEqual(next.structuredContent, { emitted: M }, `${context}: the next call's result`);
      await waitFor(() => h.delivered.filter((d) => d.session === newId).length >= M, `${context}: the next call's logs`, BOUND_MS);
      assert.deepEqual(
        h.delivered.filter((d) => d.session === newId).map((d) => d.seq),
        range(M),
        `${context}: the next call's logs, once each`,
      );

      // Never re-sent: the new session ran exactly the new call.
      assert.equal(runs.get(newId)?.length, 1, `${context}: emit runs on the new session: ${JSON.stringify(runs.get(newId))}`);
      if (cutCallId !== undefined) assert.ok(!runs.get(newId)?.includes(cutCallId), `${context}: the cut call was not re-sent`);
      // The old session is gone on the server.
      await waitFor(async () => (await f.endpoint.store.sessions.get(oldId)) === undefined, `${context}: the old session to be gone`, BOUND_MS);
      // Never an event on both transports, never one twice.
      assertNoDuplicates(h.delivered, context);
      assert.ok(
        h.delivered.every((d) => d.session === oldId || d.session === newId),
        `${context}: every log arrived tagged with a live session`,
      );
      assert.equal(h.reports.length, 1, `${context}: one divergence: ${JSON.stringify(h.reports.map((r) => [r.code, r.error.message]))}`);
      assert.deepEqual(
        f.errors.map((e) => e.message),
        [],
        `${context}: no endpoint errors`,
      );
    } finally {
      await h.close();
    }
  }

  const cuts: Cut[] = [];
  for (const mode of ['fin', 'rst'] as const) {
    // Seed 003's window from the client's side: the offer is durable on the server but never
    // reaches the client, whose standalone stream comes back and is refused.
    // cutAfterBytes: a seeded point inside the offer event, set once it is measured.
    cuts.push({ phase: 'inside-offer', mode, plan: { after: 'upgrade-accepted', mode }, label: `inside the upgrade-accepted event, ${mode}` });
  }
  for (const mode of ['fin', 'rst'] as const) {
    cuts.push({ phase: 'before-101', mode, plan: { after: 'HTTP/1.1 101', cutAfterBytes: 0, mode }, label: `before the 101, ${mode}` });
  }
  for (const mode of ['fin', 'rst'] as const) {
    // cutAfterBytes: a seeded point inside the head, set once the head is measured.
    cuts.push({ phase: 'inside-101', mode, plan: { after: 'HTTP/1.1 101', mode }, label: `inside the 101 head, ${mode}` });
  }
  for (const mode of ['fin', 'rst'] as const) {
    // cutAfterBytes: exactly the head, set once it is measured.
    cuts.push({ phase: 'after-101', mode, plan: { after: 'HTTP/1.1 101', mode }, label: `after the 101, before the first frame, ${mode}` });
  }
  const COUNT = 300;
  for (let i = 0; i < 6; i++) {
    const mode = i % 2 === 0 ? 'fin' : 'rst';
    const frame = 5 + Math.floor(rand() * 200);
    const into = 1 + Math.floor(rand() * 12);
    // Server frames are not masked: the marker is the text of log frame `frame`, so the cut
    // lands `into` bytes inside that frame's payload while later frames are being written.
    cuts.push({
      phase: 'mid-frame',
      mode,
      count: COUNT,
      frame,
      plan: { after: `"seq":${frame},`, cutAfterBytes: into, mode },
      label: `mid-frame: ${into} bytes into log frame ${frame} of ${COUNT}, ${mode}`,
    });
  }
  for (let i = 0; i < 2; i++) {
    const mode = i % 2 === 0 ? 'fin' : 'rst';
    // Counted from the 101: a seeded byte of the socket's stream while the call answers
    // (about 200 bytes per step, so well inside the 300 steps' frames).
    const pastHead = 64 + Math.floor(rand() * 30_000);
    cuts.push({
      phase: 'mid-frame',
      mode,
      count: COUNT,
      pastHead,
      plan: { after: 'HTTP/1.1 101', mode },
      label: `while frames flow: ${pastHead} bytes past the 101 head, ${mode}`,
    });
  }
  test('right after the whole upgrade-accepted event (fin): the client follows the offer and never resumes the SSE stream', { timeout: 15_000 }, async () => {
    const plan: ConnectionPlan = { after: 'upgrade-accepted', cutAfterBytes: measured.offerTail, mode: 'fin' };
    const context = `${JSON.stringify(plan)} (seed ${SEED})`;
    const h = await openClient(f, (proxy) => (proxy.cuts > 0 ? {} : plan));
    try {
      const sessionId = h.transport.sessionId as string;
      await waitFor(() => h.transport.upgraded, `${context}: the upgrade`, BOUND_MS);
      assert.equal(h.proxy?.cuts, 1, `${context}: the offer stream was cut`);
      assert.equal(h.transport.sessionId, sessionId, `${context}: the same session moved to the socket`);
      const result = await within(h.client.callTool({ name: 'emit', arguments: { count: 5 } }), `${context}: a call`, BOUND_MS);
      assert.deepEqual(result.structuredContent, { emitted: 5 }, `${context}: its result`);
      assert.equal(h.reports.length, 0, `${context}: no divergence: ${JSON.stringify(h.reports.map((r) => [r.code, r.error.message]))}`);
      assert.equal(
        h.fetches.filter((x) => x.startsWith('GET')).length,
        1,
        `${context}: one GET only, no resume of the offer stream: ${JSON.stringify(h.fetches)}`,
      );
      assertNoDuplicates(h.delivered, context);
    } finally {
      await h.close();
    }
  });

  for (const cut of cuts) {
    test(cut.label, { timeout: 20_000 }, async () => {
      const { head101, offerTail } = measured;
      // (Short of the event's last byte: the client never has the whole offer.)
      if (cut.phase === 'inside-offer') cut.plan.cutAfterBytes = Math.floor(rand() * (offerTail - 1));
      if (cut.phase === 'inside-101') cut.plan.cutAfterBytes = 1 + Math.floor(rand() * (head101 - 1));
      if (cut.phase === 'after-101') cut.plan.cutAfterBytes = head101;
      if (cut.pastHead !== undefined) cut.plan.cutAfterBytes = head101 + cut.pastHead;
      await runCut(cut);
    });
  }
});

// ---------------------------------------------------------------------------------------
// 3. Requests the application makes while the session is switching transports

describe('calls made while the session switches to the socket', () => {
  let f: Fixture;
  const runs: EmitRuns = new Map();
  before(async () => {
    f = await startFixture({ server: countingServer(runs), upgrade: { websocket: true }, keepAliveMs: 0, hostGuard: false });
    f.listener.server.on('request', (_q, res) => {
      res.shouldKeepAlive = false;
    });
  });
  after(() => f.close());

  test('a call right after connect() is carried (over the socket once open), not refused with upgrade-pending', { timeout: 15_000 }, async () => {
    const h = await openClient(f);
    try {
      // connect() resolves with the offer GET in flight: this call races the offer.
      const outcome = await within(settle(h.client.callTool({ name: 'emit', arguments: { count: 3 } })), 'the early call', BOUND_MS);
      assert.ok(
        outcome.ok,
        `the early call failed: ${outcome.ok ? '' : String(outcome.error)} (reason ${outcome.ok ? '' : String(reasonOf(outcome.error) ?? (outcome.error as { code?: unknown }).code)})`,
      );
      assert.deepEqual((outcome.value as { structuredContent?: unknown }).structuredContent, { emitted: 3 }, 'its result');
      const sessionId = h.transport.sessionId as string;
      assert.equal(runs.get(sessionId)?.length, 1, 'it ran once');
      assert.equal(h.reports.length, 0, `no divergence: ${JSON.stringify(h.reports.map((r) => r.code))}`);
    } finally {
      await h.close();
    }
  });

  test('a call held during a handshake that is cut runs once, on the new session (or fails typed): never hangs, never twice', { timeout: 15_000 }, async () => {
    const h = await openClient(f, (proxy) => (proxy.cuts > 0 ? {} : { after: 'HTTP/1.1 101', cutAfterBytes: 0, mode: 'fin' }));
    try {
      // The moment the client's handshake request passes the proxy, the transport is
      // upgrading: a call now waits for the socket (this is one process, so the 101 cannot
      // have come back yet).
      // (Boxed: resolving with the call's promise itself would adopt its outcome.)
      let called = false;
      const held = new Promise<{ call: Promise<unknown> }>((resolve) => {
        h.proxy?.server.on('connection', (socket) => {
          socket.on('data', (chunk: Buffer) => {
            // Only the first handshake: the re-initialized session upgrades through here too.
            if (!called && /^upgrade: websocket\r$/im.test(chunk.toString('latin1'))) {
              called = true;
              resolve({ call: h.client.callTool({ name: 'emit', arguments: { count: 4 } }) });
            }
          });
        });
      });
      const { call } = await within(held, 'the handshake request', BOUND_MS);
      const outcome = await within(settle(call), 'the held call', BOUND_MS);
      await waitFor(() => h.reports.length > 0, 'onDivergence', BOUND_MS);
      const report = h.reports[0] as DivergenceReport;
      const oldId = report.previousSessionId as string;
      const newId = report.sessionId as string;
      assert.equal(report.code, 'session-superseded', `reported code (${report.error.message})`);
      assert.equal(runs.get(oldId), undefined, 'the held call never reached the old session');
      if (outcome.ok) {
        assert.deepEqual((outcome.value as { structuredContent?: unknown }).structuredContent, { emitted: 4 }, 'its result');
        assert.equal(
          runs.get(newId)?.length,
          1,
          `it ran once, on the new session: ${JSON.stringify(runs.get(newId))} reports ${JSON.stringify(h.reports.map((r) => [r.code, r.previousSessionId?.slice(0, 4), r.sessionId?.slice(0, 4)]))}`,
        );
      } else {
        const reason = reasonOf(outcome.error) ?? (outcome.error as { code?: unknown }).code;
        assert.equal(reason, 'session-superseded', `if it fails, then with session-superseded: ${String(outcome.error)} (reason ${String(reason)})`);
        assert.equal(runs.get(newId), undefined, 'a failed call never ran');
      }
      assertNoDuplicates(h.delivered, 'held call');
    } finally {
      await h.close();
    }
  });
});
