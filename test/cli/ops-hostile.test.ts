/**
 * What a hostile client can do to `serve`'s metrics, log and ops server, with a real process:
 * unknown tool names add no series, 100 KB names are cut and counted and the next scrape
 * answers, a JSON-RPC id holding a newline stays on its log line, and the ops server refuses
 * a rebinding Host. Also: the resource follows OTEL_SERVICE_NAME, durations end in
 * `_seconds`, and a JSON-RPC error carries rpc.response.status_code.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { randomBytes } from 'node:crypto';
import { startCli, stop } from './run-cli.js';
import { waitFor } from '../helpers/wait.js';
import { eventLog } from '../../src/cli/event-log.js';

const ACCEPT = 'application/json, text/event-stream';
const VERSION = '2025-11-25';

/** A session on `url`: initialized, with a function that posts one message and reads the whole answer. */
async function session(url: string): Promise<(message: object) => Promise<string>> {
  const init = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: ACCEPT },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 't', version: '1' } },
    }),
  });
  assert.equal(init.status, 200);
  await init.text();
  const id = init.headers.get('mcp-session-id');
  assert.ok(id);
  const post = async (message: object): Promise<string> => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ACCEPT, 'mcp-session-id': id, 'mcp-protocol-version': VERSION },
      body: JSON.stringify({ jsonrpc: '2.0', ...message }),
    });
    const text = await res.text();
    assert.ok(res.status === 200 || res.status === 202, `${res.status}: ${text.slice(0, 200)}`);
    return text;
  };
  await post({ method: 'notifications/initialized' });
  return post;
}

/** The distinct series of a Prometheus text exposition, a histogram's buckets, sum and count as one. */
function series(text: string): string[] {
  const samples = text.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
  return [
    ...new Set(
      samples.map((l) =>
        l
          .slice(0, l.lastIndexOf(' '))
          .replace(/_(bucket|sum|count)\{/, '{')
          .replace(/,?le="[^"]*"/, ''),
      ),
    ),
  ];
}

/** Runs `count` calls, `width` at a time. */
async function calls(count: number, width: number, one: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) await one(next++);
    }),
  );
}

/** GET with a Host header of our choosing (fetch will not send one). */
function getWithHost(url: URL, host: string, origin?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { host, ...(origin ? { origin } : {}) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

test(
  'serve --metrics under hostile names: unknown names add no series, 100 KB names are cut and counted, the scrape answers',
  { timeout: 300_000 },
  async (t) => {
    const { child, line } = await startCli(['serve', '--port', '0', '--store', 'memory', '--metrics', '127.0.0.1:0', '--log-format', 'json'], {
      env: { ...process.env, OTEL_SERVICE_NAME: 'continuity-under-test', OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=hostile' },
    });
    t.after(() => stop(child));
    const listening = JSON.parse(line) as { url: string; metrics: string };
    const metrics = new URL(listening.metrics);
    const post = await session(listening.url);
    const scrape = async (): Promise<string> => {
      const res = await fetch(metrics);
      const text = await res.text();
      assert.equal(res.status, 200, text.slice(0, 500));
      return text;
    };

    // A registered tool keeps its name; a JSON-RPC error carries its code as the status.
    assert.match(await post({ id: 1, method: 'tools/call', params: { name: 'add', arguments: { a: 1, b: 2 } } }), /"text":"3"/);
    assert.match(await post({ id: 2, method: 'no/such/method' }), /-32601/);
    const baseline = await scrape();
    assert.match(baseline, /target_info\{[^}]*service_name="continuity-under-test"/);
    assert.match(baseline, /target_info\{[^}]*deployment_environment="hostile"/);
    assert.match(baseline, /^mcp_server_operation_duration_seconds_count\{[^}]*gen_ai_tool_name="add"/m);
    assert.match(baseline, /^mcp_server_operation_duration_seconds_count\{mcp_method_name="_OTHER"[^}]*rpc_response_status_code="-32601"/m);
    assert.doesNotMatch(baseline, /^mcp_server_operation_duration_count/m, 'no duration without its unit');

    // 1,000 calls to random unknown tool names.
    await calls(1000, 8, (i) => post({ id: `u${i}`, method: 'tools/call', params: { name: `tool-${randomBytes(8).toString('hex')}`, arguments: {} } }));
    const after = await scrape();
    const added = series(after).length - series(baseline).length;
    assert.ok(added <= 5, `1,000 unknown tool names added ${added} series`);
    assert.ok(added > 0, 'the unknown calls are counted, under _OTHER');
    assert.match(after, /gen_ai_tool_name="_OTHER"/);
    assert.doesNotMatch(after, /tool-[0-9a-f]{16}/, 'no unknown name reaches the scrape');

    // 400 calls with 100 KB tool names (40 MB), then a scrape.
    const long = (i: number): string => `${i}-${'x'.repeat(100 * 1024)}`;
    await calls(400, 8, (i) => post({ id: `l${i}`, method: 'tools/call', params: { name: long(i), arguments: {} } }));
    const started = performance.now();
    const bounded = await scrape();
    const ms = performance.now() - started;
    assert.ok(bounded.length < 256 * 1024, `the scrape is ${bounded.length} bytes`);
    const cuts = /^mcp_continuity_cut_names_total\{mcp_continuity_attribute="gen_ai.tool.name"[^}]*\} (\d+)/m.exec(bounded);
    assert.ok(cuts && Number(cuts[1]) >= 400, `cut names counted: ${cuts?.[0] ?? 'none'}`);
    assert.equal(child.exitCode, null, 'serve is still running');
    t.diagnostic(
      `series: baseline ${series(baseline).length}, after 1,000 unknown names ${series(after).length}, after 400 × 100 KB ${series(bounded).length}`,
    );
    t.diagnostic(`scrape after the long names: ${bounded.length} bytes in ${ms.toFixed(0)} ms`);
  },
);

test('a JSON-RPC id holding a newline stays on one text log line', { timeout: 60_000 }, async (t) => {
  const { child, line } = await startCli(['serve', '--port', '0', '--store', 'memory', '--log-format', 'text']);
  t.after(() => stop(child));
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const forged = `x\n[mcp-continuity] 2026-01-01T00:00:00.000Z error store-fault code=store-unavailable replica=r-forged`;
  const mcp = /serving the example server at (\S+)/.exec(line)?.[1];
  assert.ok(mcp, `banner: ${line}`);
  const res = await fetch(mcp, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: ACCEPT, 'mcp-session-id': 'no-such-session', 'mcp-protocol-version': VERSION },
    body: JSON.stringify({ jsonrpc: '2.0', id: forged, method: 'tools/list' }),
  });
  assert.equal(res.status, 404);
  await res.text();
  const lines = await waitFor(() => {
    const all = stderr.split('\n').filter((l) => l !== '');
    return all.some((l) => / refusal /.test(l)) && all;
  }, 'the refusal line');
  const refusal = lines.filter((l) => / refusal /.test(l));
  assert.equal(refusal.length, 1, lines.join('\n'));
  assert.match(refusal[0] ?? '', /request="x\\n\[mcp-continuity\]/, 'the newline is written escaped, inside quotes');
  assert.ok(!lines.some((l) => l.startsWith('[mcp-continuity] 2026-01-01')), `a forged line:\n${lines.join('\n')}`);
  assert.ok(!lines.some((l) => /^\[mcp-continuity\] \S+ error store-fault/.test(l)), 'no store-fault event');
});

test('the text log quotes what could pass for another field or line', () => {
  const lines: string[] = [];
  const log = eventLog({ format: 'text', quiet: false, write: (l) => lines.push(l) });
  log.setReplica('r-t');
  for (const requestId of ['a\nb', 'a b=c', 'a\u2028b', 'x'.repeat(1000), 7])
    log.hooks.onRefusal?.({ code: 'session-not-found', status: 404, method: 'POST', sessionId: 's', requestId, lastEventId: undefined, replicaId: 'r-t' });
  assert.equal(lines.length, 5);
  for (const l of lines) assert.doesNotMatch(l, /[\n\r\u2028\u2029]/);
  assert.match(lines[0] ?? '', / request="a\\nb" /);
  assert.match(lines[1] ?? '', / request="a b=c" /);
  assert.match(lines[2] ?? '', / request="a\\u2028b" /);
  assert.ok((lines[3] ?? '').length < 400, 'a long id is cut');
  assert.match(lines[4] ?? '', / request=7 /);
  const json: string[] = [];
  const jlog = eventLog({ format: 'json', quiet: false, write: (l) => json.push(l) });
  jlog.hooks.onRefusal?.({
    code: 'session-not-found',
    status: 404,
    method: 'POST',
    sessionId: 's',
    requestId: 'a\u2028b',
    lastEventId: undefined,
    replicaId: 'r',
  });
  assert.doesNotMatch(json[0] ?? '', /\u2028/);
  assert.equal((JSON.parse(json[0] ?? '') as { request: string }).request, 'a\u2028b');
});

test('the ops server checks Host and Origin like the endpoint: a rebinding name is refused', { timeout: 60_000 }, async (t) => {
  const { child, line } = await startCli([
    'serve',
    '--port',
    '0',
    '--store',
    'memory',
    '--metrics',
    '127.0.0.1:0',
    '--log-format',
    'json',
    '--allowed-hosts',
    'mcp.example.com',
  ]);
  t.after(() => stop(child));
  const metrics = new URL((JSON.parse(line) as { metrics: string }).metrics);
  const port = metrics.port;
  assert.equal(await getWithHost(metrics, `127.0.0.1:${port}`), 200);
  assert.equal(await getWithHost(metrics, `localhost:${port}`), 200);
  assert.equal(await getWithHost(metrics, `mcp.example.com`), 200, '--allowed-hosts applies');
  assert.equal(await getWithHost(metrics, `attacker.example:${port}`), 403, 'a rebinding name');
  assert.equal(await getWithHost(new URL('/readyz', metrics), `attacker.example:${port}`), 403);
  assert.equal(await getWithHost(metrics, `127.0.0.1:${port}`, 'http://attacker.example'), 403, "a page's Origin");
});
