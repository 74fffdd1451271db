/**
 * The HTTP chaos proxy with real servers and clients: Host rewriting past a loopback guard,
 * seeded cuts after N events (FIN and RST) that our client resumes through, round robin.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { startHttpChaosProxy } from '../../src/chaos/proxy.js';
import { ContinuityClientTransport } from '../../src/client/index.js';
import { createExampleServer } from '../../src/example/index.js';
import { listen } from '../../src/node/index.js';
import { createEndpoint } from '../../src/server/index.js';

async function guardedServer(): Promise<Awaited<ReturnType<typeof listen>>> {
  // A loopback bind: the Host guard is on, and the proxy's port differs from the server's.
  return listen(createEndpoint({ server: () => createExampleServer(), retryMs: 5, keepAliveMs: 0 }), { port: 0 });
}

for (const mode of ['fin', 'rst'] as const) {
  test(`cut after N events (${mode}): our client resumes through the proxy, nothing lost or duplicated`, { timeout: 30_000 }, async (t) => {
    const server = await guardedServer();
    t.after(() => server.close());
    const proxy = await startHttpChaosProxy({ targets: [server.url.origin], cutAfterEvents: 7, cutProbability: 0.5, seed: 42, mode });
    t.after(() => proxy.close());
    const client = new Client({ name: 'chaos', version: '1.0.0' });
    const seqs: number[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      const data = n.params.data as { seq?: number } | undefined;
      if (typeof data?.seq === 'number') seqs.push(data.seq);
    });
    await client.connect(new ContinuityClientTransport(new URL('/mcp', proxy.url), { reconnect: { initialDelayMs: 5, maxDelayMs: 20 } }));
    t.after(() => client.close());
    for (let call = 0; call < 4; call++) {
      seqs.length = 0;
      const result = await client.callTool({ name: 'emit', arguments: { count: 40, intervalMs: 1 } });
      assert.deepEqual(result.structuredContent, { emitted: 40 });
      assert.deepEqual(
        seqs,
        Array.from({ length: 40 }, (_, i) => i + 1),
        `call ${call}: every event once, in order`,
      );
    }
    assert.ok(proxy.faults.length > 0, 'the proxy cut some responses');
    assert.ok(proxy.faults.every((f) => f.kind === mode && (f.events === 7 || f.bytes > 0)));
  });
}

test('round robin per request across targets, with Host rewritten to each target', async (t) => {
  const seen: string[] = [];
  const servers = await Promise.all(
    ['a', 'b', 'c'].map(async (name) => {
      const s = createServer((req, res) => {
        seen.push(`${name} ${req.headers.host}`);
        res.end(name);
      });
      await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
      t.after(() => s.close());
      return { name, url: `http://127.0.0.1:${(s.address() as AddressInfo).port}` };
    }),
  );
  const proxy = await startHttpChaosProxy({ targets: servers.map((s) => s.url) });
  t.after(() => proxy.close());
  const bodies: string[] = [];
  for (let i = 0; i < 6; i++) bodies.push(await (await fetch(new URL('/x', proxy.url))).text());
  assert.deepEqual(bodies, ['a', 'b', 'c', 'a', 'b', 'c']);
  assert.deepEqual(
    seen,
    [...servers, ...servers].map((s) => `${s.name} ${new URL(s.url).host}`),
  );
});

test('mcp-continuity chaos from the command line: prints its URL and seed, forwards past the Host guard, reports faults', { timeout: 30_000 }, async (t) => {
  const { startCli, stop } = await import('../cli/run-cli.js');
  const server = await guardedServer();
  t.after(() => server.close());
  const { child, line, output } = await startCli(['chaos', '--target', server.url.origin, '--cut-after-events', '1', '--seed', '9']);
  t.after(() => stop(child));
  assert.match(line, /^http:\/\/127\.0\.0\.1:\d+\/ → 127\.0\.0\.1:\d+ \(seed 9\)$/);
  const proxied = new URL('/mcp', line.split(' ')[0]);
  const response = await fetch(proxied, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    }),
  });
  assert.equal(response.status, 200, 'the loopback guard accepts the rewritten Host');
  const text = await response.text();
  assert.match(text, /"serverInfo"/);
  const { waitFor } = await import('../helpers/wait.js');
  await waitFor(() => /fault: request 0 to 127\.0\.0\.1:\d+: fin after 1 event,/.test(output()), 'the fault line');
});
