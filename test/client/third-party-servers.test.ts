/**
 * Our `ContinuityClientTransport` (under the SDK v1 `Client`) and our `probe` CLI against a
 * popular third-party server framework: `fastmcp` (its Streamable HTTP comes from
 * `mcp-proxy` on the official v2 server transport, with a per-session InMemoryEventStore by
 * default — it cannot be turned off through fastmcp's typed options). Its event IDs are
 * opaque (`<streamId>_<ms>_<counter>_<random>`), so nothing after a resume can be proven.
 *
 * 1. stateful: tools, progress (POST stream) and logs (fastmcp sends them on the GET
 *    stream) each arrive once, in order; no divergence on a healthy session;
 * 2. the call's stream reset mid-call by a TCP proxy while the tool still reports progress:
 *    by default `undetectable` — the call fails with that reason, nothing after the cut
 *    reaches the application, the session is replaced; with `trustOpaqueIds` the same cut
 *    resumes (fastmcp replays from Last-Event-ID) and the call completes exactly; with
 *    no event store (mcp-proxy's `false`) the call fails at once, typed, session kept;
 * 3. stateless mode: plain request/response, no session, no GET loop, no divergence;
 * 4. `probe`: exits 1 with a verdict per check — resumes replay exactly (content is judged,
 *    not IDs), but no replay epoch makes a reset log undetectable (FAIL). A resume right
 *    after the cut may meet 409 (fastmcp has not yet seen the drop): the probe retries it.
 * fastmcp waits ~1 s for client capabilities before answering each initialize: hence the
 * timeouts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { FastMCP } from 'fastmcp';
import type { EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { connectHarness, assertRejectedWith, firstText, settle } from '../helpers/faulty/client.js';
import { freePort } from '../helpers/processes.js';
import { waitFor, within } from '../helpers/wait.js';
import { runCli } from '../cli/run-cli.js';

// mcp-proxy (fastmcp's HTTP layer) console.logs every request; keep this file's output readable.
const consoleLog = console.log.bind(console);
console.log = (...args: unknown[]) => {
  if (!(typeof args[0] === 'string' && args[0].startsWith('[mcp-proxy]'))) consoleLog(...args);
};
const QUIET = { debug() {}, error() {}, info() {}, log() {}, warn() {} };

interface Fastmcp {
  url: URL;
  runs: { echo: number; emit: number };
  close(): Promise<void>;
}

/**
 * A fastmcp server in this process: `echo` (text) and `emit` (`count` progress notifications,
 * `intervalMs` apart, optionally a log each). `noStore`: mcp-proxy's documented
 * `eventStore: false` (no resumability), which fastmcp passes through but does not type.
 */
async function startFastmcp({ stateless = false, noStore = false } = {}): Promise<Fastmcp> {
  const runs = { echo: 0, emit: 0 };
  const server = new FastMCP({ name: 'fastmcp-third-party', version: '1.0.0', logger: QUIET });
  server.addTool({
    name: 'echo',
    parameters: z.object({ text: z.string() }),
    execute: async ({ text }) => {
      runs.echo++;
      return `echo: ${text}`;
    },
  });
  // Named and shaped like our own `emit`, so `probe` finds it by itself and can burst with it.
  server.addTool({
    name: 'emit',
    parameters: z.object({ count: z.number().int().min(0), intervalMs: z.number().int().min(0), log: z.boolean().optional() }),
    execute: async ({ count, intervalMs, log }, { reportProgress, log: logger }) => {
      runs.emit++;
      for (let i = 1; i <= count; i++) {
        await reportProgress({ progress: i, total: count });
        if (log === true) logger.info(`step #${i}`);
        if (intervalMs > 0) await new Promise((r) => setTimeout(r, intervalMs));
      }
      return `emitted ${count}`;
    },
  });
  // fastmcp needs a fixed port; another test may take the free one first: try again.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      const eventStore = noStore ? { eventStore: false as unknown as EventStore } : {};
      await server.start({ transportType: 'httpStream', httpStream: { port, host: '127.0.0.1', stateless, ...eventStore } });
      return { url: new URL(`http://127.0.0.1:${port}/mcp`), runs, close: () => server.stop() };
    } catch (error) {
      if (attempt >= 3 || (error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    }
  }
}

interface Seen {
  method: string;
  rpc?: string;
  lastEventId?: string;
  sessionId?: string;
  status: number;
}

/** A `fetch` for our transport that records each request once its response head arrived. */
function recordingFetch(seen: Seen[]): (url: URL, init: RequestInit) => Promise<Response> {
  return async (url, init) => {
    const response = await fetch(url, init);
    const headers = new Headers(init.headers);
    const entry: Seen = { method: init.method ?? 'GET', status: response.status };
    if (typeof init.body === 'string') entry.rpc = String((JSON.parse(init.body) as { method?: unknown }).method);
    for (const [key, name] of [
      ['lastEventId', 'last-event-id'],
      ['sessionId', 'mcp-session-id'],
    ] as const)
      if (headers.has(name)) entry[key] = headers.get(name) ?? '';
    seen.push(entry);
    return response;
  };
}

/** A TCP proxy that, once armed, resets the first connection whose response bytes contain `marker`, just before it. */
async function startCutProxy(target: URL, marker: string): Promise<{ url: URL; arm(): void; readonly cuts: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  let armed = false;
  let cuts = 0;
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    }
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.pipe(upstream);
    let tail = '';
    upstream.on('data', (chunk: Buffer) => {
      const text = tail + chunk.toString('latin1');
      const at = armed ? text.indexOf(marker) : -1;
      tail = text.slice(-marker.length);
      if (at < 0) {
        client.write(chunk);
        return;
      }
      armed = false;
      cuts++;
      upstream.destroy();
      client.write(chunk.subarray(0, Math.max(0, at - (text.length - chunk.length))), () => client.resetAndDestroy());
    });
    upstream.on('end', () => client.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: new URL(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}/mcp`),
    arm: () => void (armed = true),
    get cuts() {
      return cuts;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const OPAQUE_ID = /^[0-9a-f-]{36}_\d{13}_[0-9a-z]{4}_[0-9a-z]*$/;

test('1. fastmcp (stateful): tools, progress and logs through our transport, each once, no divergence', { timeout: 15_000 }, async () => {
  const fm = await startFastmcp();
  const seen: Seen[] = [];
  const h = await connectHarness(fm.url, { fetch: recordingFetch(seen) });
  try {
    assert.ok(h.transport.sessionId !== undefined, 'fastmcp assigned a session');
    const { tools } = await h.client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ['echo', 'emit'], 'tools listed');
    assert.equal(firstText(await h.client.callTool({ name: 'echo', arguments: { text: 'hi' } })), 'echo: hi', 'text result');
    // fastmcp's logs have no related request: they travel on the GET stream, so wait for it.
    await waitFor(() => seen.some((r) => r.method === 'GET' && r.status === 200), 'the standalone GET stream');
    const progress: number[] = [];
    const result = await h.client.callTool({ name: 'emit', arguments: { count: 6, intervalMs: 2, log: true } }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    });
    assert.equal(firstText(result), 'emitted 6', 'tool result');
    assert.deepEqual(progress, [1, 2, 3, 4, 5, 6], 'every progress notification, once, in order');
    await h.deliveredAtLeast(6);
    const logs = (h.delivered as unknown as Array<{ message: string }>).map((d) => d.message);
    assert.deepEqual(
      logs,
      ['#1', '#2', '#3', '#4', '#5', '#6'].map((n) => `step ${n}`),
      'every log, once, in order',
    );
    assert.deepEqual(h.reports, [], 'no divergence');
    assert.deepEqual(
      h.errors.map((e) => e.message),
      [],
      'no error',
    );
    assert.deepEqual(fm.runs, { echo: 1, emit: 1 }, 'each tool ran once');
    assert.ok(
      seen.every((r) => r.lastEventId === undefined),
      'nothing was resumed',
    );
  } finally {
    await h.close();
    await fm.close();
  }
});

const CUT_MODES = {
  default: ': undetectable → the call fails with that reason, re-initialized',
  trustOpaqueIds: ', trustOpaqueIds: resumed, the call completes exactly',
  noStore: ', no event store: the call fails at once (request-abandoned, may have run), the session stays',
} as const;

for (const [mode, title] of Object.entries(CUT_MODES)) {
  test(`2. fastmcp, the call's stream reset mid-call${title}`, { timeout: 20_000 }, async () => {
    const fm = await startFastmcp({ noStore: mode === 'noStore' });
    // Reset just before progress 4 reaches the client; the tool goes on with 4…8 meanwhile.
    const proxy = await startCutProxy(fm.url, '"progress":4,');
    const seen: Seen[] = [];
    const h = await connectHarness(proxy.url, { fetch: recordingFetch(seen), trustOpaqueIds: mode === 'trustOpaqueIds' });
    try {
      const oldSession = h.transport.sessionId;
      const progress: number[] = [];
      proxy.arm();
      const call = settle(
        h.client.callTool({ name: 'emit', arguments: { count: 8, intervalMs: 20 } }, undefined, { onprogress: (p) => progress.push(p.progress) }),
      );
      const outcome = await within(call, 'the cut call', 15_000);
      assert.equal(proxy.cuts, 1, 'the stream was cut once');
      assert.equal(seen.filter((r) => r.rpc === 'tools/call').length, 1, 'the tools/call was never re-sent');
      assert.equal(fm.runs.emit, 1, 'the tool ran once');
      const resume = seen.find((r) => r.lastEventId !== undefined);
      if (mode === 'noStore') {
        // Observed: no store, no event IDs (not even a priming event): nothing to resume
        // from, so the call fails at once with a typed error; the session itself is fine.
        assertRejectedWith(outcome, 'request-abandoned');
        assert.equal(resume, undefined, 'no resume attempted');
        assert.deepEqual(progress, [1, 2, 3], 'what arrived before the cut, nothing more');
        assert.deepEqual(h.reports, [], 'no divergence: the session was not in doubt');
        assert.equal(h.transport.sessionId, oldSession, 'same session');
        assert.equal(firstText(await h.client.callTool({ name: 'echo', arguments: { text: 'after' } })), 'echo: after', 'a new call works');
        return;
      }
      // Observed: our client resumes with GET + Last-Event-ID (fastmcp's opaque ID of
      // progress 3); fastmcp answers 200 and replays 4…8 and the result from its store.
      assert.ok(
        resume?.lastEventId !== undefined && OPAQUE_ID.test(resume.lastEventId),
        `resumed with fastmcp's opaque Last-Event-ID (${resume?.lastEventId})`,
      );
      assert.deepEqual([resume.method, resume.status, resume.sessionId], ['GET', 200, oldSession], 'fastmcp accepted the resume');
      if (mode === 'trustOpaqueIds') {
        assert.ok(outcome.ok, `the call completed across the cut: ${outcome.ok ? '' : String(outcome.error)}`);
        assert.equal(firstText(outcome.value), 'emitted 8', 'the right result');
        assert.deepEqual(progress, [1, 2, 3, 4, 5, 6, 7, 8], 'every progress notification once, in order: fastmcp replays exactly');
        assert.deepEqual(h.reports, [], 'no divergence');
        assert.equal(h.transport.sessionId, oldSession, 'same session');
        return;
      }
      // Default: opaque IDs after a resume prove nothing. Loud: the call fails with
      // `undetectable`, the application saw nothing after the cut, a new session replaces it.
      assertRejectedWith(outcome, 'undetectable');
      const report = await h.nextDivergence();
      assert.equal(report.code, 'undetectable', report.error.message);
      assert.equal(report.failedRequests, 1, 'the in-flight call was failed');
      assert.equal(report.previousSessionId, oldSession, 'old session named');
      assert.ok(report.sessionId !== undefined && report.sessionId !== oldSession, 'a new session');
      assert.equal(h.transport.sessionId, report.sessionId, 'the transport moved to it');
      assert.deepEqual(progress, [1, 2, 3], 'nothing after the unprovable resume reached the application');
      assert.equal(seen.filter((r) => r.rpc === 'initialize').length, 2, 're-initialized once');
      assert.equal(firstText(await h.client.callTool({ name: 'echo', arguments: { text: 'after' } })), 'echo: after', 'a new call works on the new session');
      assert.equal(h.reports.length, 1, 'onDivergence fired once');
    } finally {
      await h.close();
      await proxy.close();
      await fm.close();
    }
  });
}

test('3. fastmcp stateless mode: no session, plain request/response, no GET loop, no divergence', { timeout: 15_000 }, async () => {
  const fm = await startFastmcp({ stateless: true });
  const seen: Seen[] = [];
  const h = await connectHarness(fm.url, { fetch: recordingFetch(seen) });
  try {
    assert.equal(h.transport.sessionId, undefined, 'no session');
    const { tools } = await h.client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ['echo', 'emit'], 'tools listed');
    for (let i = 0; i < 3; i++) assert.equal(firstText(await h.client.callTool({ name: 'echo', arguments: { text: String(i) } })), `echo: ${i}`, `call ${i}`);
    const progress: number[] = [];
    // ~125 ms of streaming: room for any (wrong) GET retry loop to show itself.
    const result = await h.client.callTool({ name: 'emit', arguments: { count: 5, intervalMs: 25 } }, undefined, {
      onprogress: (p) => progress.push(p.progress),
    });
    assert.equal(firstText(result), 'emitted 5', 'tool result');
    assert.deepEqual(progress, [1, 2, 3, 4, 5], 'progress on the POST stream, once, in order');
    // Observed: without a session our transport opens no GET at all; fastmcp would answer 405.
    const gets = seen.filter((r) => r.method === 'GET');
    assert.ok(gets.length <= 1 && gets.every((g) => g.status === 405), `at most one GET, refused, never retried: ${JSON.stringify(gets)}`);
    assert.ok(
      seen.every((r) => r.sessionId === undefined && r.lastEventId === undefined),
      'no Mcp-Session-Id, no resume',
    );
    assert.deepEqual(fm.runs, { echo: 3, emit: 1 }, 'each call ran once');
    assert.deepEqual(h.reports, [], 'no divergence');
    assert.deepEqual(
      h.errors.map((e) => e.message),
      [],
      'no error',
    );
  } finally {
    await h.close();
    await fm.close();
  }
});

test('4. probe against fastmcp (stateful): a verdict per check, exit 3 (deviations, no loss), opaque IDs judged by content', { timeout: 120_000 }, async () => {
  const fm = await startFastmcp();
  try {
    const r = await runCli(['probe', fm.url.href, '--no-color'], { timeoutMs: 100_000 });
    assert.equal(r.code, 3, `exit 3: it resumes, with deviations from the spec\n${r.stderr}`);
    assert.equal(r.stderr, '', 'nothing on stderr when piped');
    assert.match(r.stdout, /^server fastmcp-third-party, protocol 2025-11-25, streaming tool: emit$/m, 'found the server and its tool');
    // Each check prints `<verdict>  <id>  <title>`, its `guards:` line, then its one-line detail.
    const checks = new Map(
      [...r.stdout.matchAll(/^(pass|FAIL|n\/a) +([a-z-]+) {2}.*\n.*\n +(.*)$/gm)].map((m) => [m[2], { verdict: m[1], detail: m[3] ?? '' }]),
    );
    // Right after a cut, fastmcp may still hold the stream and answer 409; the probe
    // reconnects after a delay, as a client would, and then judges the replay: exact.
    assert.match(
      checks.get('resume-post')?.detail ?? '',
      /^cut after 10 events; resumed exactly: 31 events: 0 lost, 0 duplicated, 0 reordered$/,
      'resume-post detail',
    );
    const verdicts = Object.fromEntries([...checks].map(([id, c]) => [id, c.verdict]));
    assert.deepEqual(
      verdicts,
      {
        // Sessions: 404 for unknown ones, DELETE works.
        'unknown-session': 'pass',
        'delete-session': 'pass',
        priming: 'FAIL', // a priming event, but no retry: field
        'resume-get': 'n/a', // the GET stream carries no priming ID, and nothing to replay
        // fastmcp's store replays exactly what followed the cursor, a burst included, and
        // refuses forged and foreign cursors with 400: opaque IDs, judged by what they carry.
        'resume-post': 'pass',
        'burst-order': 'pass',
        'unknown-cursor': 'pass',
        'foreign-cursor': 'pass',
        'event-ids': 'pass',
        // …but nothing tells a client a reset log from the one it saw.
        'replay-epoch': 'FAIL',
        'host-origin': 'FAIL',
        'upgrade-boundary': 'n/a',
        restart: 'n/a',
        replica: 'n/a',
        // Neither needs more than one server to judge, but both need --restart-cmd, --replica or --tool.
        semantic: 'n/a',
        'at-most-once': 'n/a',
      },
      r.stdout,
    );
    assert.equal(
      checks.get('burst-order')?.detail,
      'emit with 200 events and no delay, resumed after the first: 201 events: 0 lost, 0 duplicated, 0 reordered',
    );
    assert.equal(checks.get('replay-epoch')?.detail, 'no X-MCP-Replay-Epoch header on the initialize response: a reset log is undetectable');
    const count = (v: string): number => Object.values(verdicts).filter((x) => x === v).length;
    assert.match(r.stdout, new RegExp(`^${count('pass')} pass, ${count('FAIL')} FAIL, ${count('n/a')} not applicable$`, 'm'), 'the tally');
  } finally {
    await fm.close();
  }
});
