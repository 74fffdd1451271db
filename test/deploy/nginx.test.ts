/**
 * docs/deploy.md's nginx recipe, as written, in front of three `serve` replicas on Redis:
 * the probe passes through it; the upstream's Host is refused with a hint that names the
 * right fix; and gzip on text/event-stream, measured, holds every event to the end.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { freePort } from '../helpers/processes.js';
import { randomPrefix, redisOrSkip, SHARED_REDIS_URL } from '../helpers/redis.js';
import { startReplica, type Replica } from '../helpers/replicas.js';
import { nginxOrSkip, recipe, startNginx, type Nginx } from '../helpers/nginx.js';
import { runCli } from '../cli/run-cli.js';
import type { ProbeReport } from '../../src/cli/probe/model.js';
import { largestGap, timeEmit } from './sse-timing.js';

const DOCS = readFileSync(fileURLToPath(new URL('../../docs/deploy.md', import.meta.url)), 'utf8');

/** The recipe with its three example upstreams replaced by `replicas`. */
function nginxConf(replicas: readonly Replica[], edit: (conf: string) => string = (c) => c): string {
  const conf = recipe(DOCS, '## nginx', 'nginx');
  const servers = [...conf.matchAll(/server 10\.0\.0\.1\d:3000/g)];
  assert.equal(servers.length, 3, 'the recipe names three replicas');
  let i = 0;
  return edit(conf.replace(/server 10\.0\.0\.1\d:3000/g, () => `server ${replicas[i++]?.url.host}`));
}

let ready = false;
/** nginx's ports, known before the replicas start: clients send them in Host. */
const ports: number[] = [];
const replicas: Replica[] = [];
const proxies: Nginx[] = [];

before(async () => {
  if (!nginxOrSkip('the nginx recipe tests') || !(await redisOrSkip('the nginx recipe tests'))) return;
  for (let i = 0; i < 2; i++) ports.push(await freePort());
  const store = `${SHARED_REDIS_URL}?prefix=${randomPrefix('nginx')}&leaseMs=1000`;
  // The public name is what clients put in Host: here nginx's own address.
  for (let i = 0; i < 3; i++) replicas.push(await startReplica(store, ['--websocket', '--allowed-hosts', ports.map((p) => `127.0.0.1:${p}`).join(',')]));
  ready = true;
});

after(async () => {
  await Promise.all(proxies.map((p) => p.stop()));
  await Promise.all(replicas.map((r) => r.kill()));
});

test('the probe passes every check through the nginx recipe', { timeout: 120_000 }, async (t) => {
  if (!ready) return t.skip('nginx or Redis missing');
  const nginx = await startNginx(nginxConf(replicas), ports[0]);
  proxies.push(nginx);
  const r = await runCli(['probe', nginx.url('/mcp').href, '--json'], { timeoutMs: 100_000 });
  const report = JSON.parse(r.stdout) as ProbeReport;
  const failed = report.checks.filter((c) => c.verdict !== 'pass' && c.verdict !== 'n/a');
  assert.deepEqual(
    failed.map((c) => `${c.id}: ${c.verdict} ${c.detail}`),
    [],
    `nginx error log:\n${nginx.errorLog()}`,
  );
  assert.equal(r.code, 0, r.stderr);
  const passed = report.checks.filter((c) => c.verdict === 'pass').map((c) => c.id);
  for (const id of ['host-origin', 'resume-post', 'burst-order', 'replay-epoch']) assert.ok(passed.includes(id), `${id} passed through nginx`);
  await nginx.stop();
});

test("without the recipe's Host line the replicas refuse nginx's upstream name, and the hint says what to do", { timeout: 60_000 }, async (t) => {
  if (!ready) return t.skip('nginx or Redis missing');
  const conf = nginxConf(replicas, (c) => c.replace(/^\s*proxy_set_header Host \$http_host;$/m, ''));
  assert.doesNotMatch(conf, /proxy_set_header Host/);
  const nginx = await startNginx(conf);
  proxies.push(nginx);
  const res = await fetch(nginx.url('/mcp'), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    }),
  });
  assert.equal(res.status, 403);
  const body = (await res.json()) as { error: { message: string; data?: { reason?: string } } };
  assert.match(body.error.message, /"mcp_replicas"/, 'names the Host it saw');
  assert.match(body.error.message, /forward the client's Host/);
  assert.match(body.error.message, /public name/);
  await nginx.stop();
});

test('gzip on text/event-stream, measured against the recipe', { timeout: 90_000 }, async (t) => {
  if (!ready) return t.skip('nginx or Redis missing');
  const COUNT = 20;
  const INTERVAL = 50;
  const GZIP = 'gzip on; gzip_types text/event-stream; gzip_min_length 0;';
  // A site that buffers whatever the upstream asks (proxy_ignore_headers X-Accel-Buffering).
  const BUFFERED = 'proxy_buffering on; proxy_ignore_headers X-Accel-Buffering;';
  const variants: Array<[string, (c: string) => string]> = [
    ['recipe', (c) => c],
    ['recipe + gzip', (c) => c.replace('gzip off;', GZIP)],
    ['buffering forced on', (c) => c.replace('proxy_buffering off;', BUFFERED)],
    ['buffering forced on + gzip', (c) => c.replace('proxy_buffering off;', BUFFERED).replace('gzip off;', GZIP)],
  ];
  const results: Record<string, Awaited<ReturnType<typeof timeEmit>>> = {};
  for (const [name, edit] of variants) {
    const nginx = await startNginx(nginxConf(replicas, edit), ports[1]);
    proxies.push(nginx);
    results[name] = await timeEmit(nginx.url('/mcp'), COUNT, INTERVAL);
    await nginx.stop();
    const s = results[name];
    t.diagnostic(
      `${name}: encoding ${s.encoding ?? 'none'}, first event ${s.arrivals[0]?.toFixed(0)} ms, largest gap ${largestGap(s).toFixed(0)} ms, ` +
        `${s.inLastRead}/${s.arrivals.length} events in the last read, response ended ${s.endedAt.toFixed(0)} ms`,
    );
  }
  const spread = (COUNT - 1) * INTERVAL; // the tool's own time between its first and last event
  const streamed = (name: string): number => (results[name]?.arrivals.at(-1) ?? 0) - (results[name]?.arrivals[0] ?? 0);
  for (const name of ['recipe', 'recipe + gzip', 'buffering forced on']) {
    assert.equal(results[name]?.arrivals.length, COUNT, name);
    assert.ok(streamed(name) >= spread * 0.8, `${name}: events arrive as they are written`);
  }
  assert.equal(results['recipe']?.encoding, null);
  assert.equal(results['recipe + gzip']?.encoding, 'gzip', 'nginx compressed the stream (and flushed it per event: buffering is off)');
  const burst = results['buffering forced on + gzip'];
  assert.equal(burst?.encoding, 'gzip');
  assert.equal(burst?.arrivals.length, COUNT);
  assert.ok((burst?.arrivals[0] ?? 0) >= spread * 0.8, 'with gzip on a buffered response, the first event waits for the end');
  assert.ok((burst?.inLastRead ?? 0) > COUNT / 2, 'and the events arrive in one burst');
});
