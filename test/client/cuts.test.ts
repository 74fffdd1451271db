/**
 * Our client against our server through a fault-injecting proxy: 200 seeded cuts (FIN and
 * RST alternately) at random byte offsets inside 500-event streams. Every event must reach
 * the SDK `Client` exactly once, in order — 0 lost, 0 duplicated, 0 reordered — and no
 * divergence may be reported (0 false alarms).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { ContinuityClientTransport, type DivergenceReport } from '../../src/client/index.js';
import { startChaosProxy } from '../../src/chaos/proxy.js';
import { startFixture } from '../helpers/fixture.js';
import { deliveryReport, prng } from '../helpers/stream-server.js';

const SEED = Number(process.env.CUTS_SEED ?? 20261129);
const CUTS = 200;
const EVENTS = 500;

test(`${CUTS} seeded cuts over ${EVENTS}-event streams: nothing lost, duplicated or falsely alarmed (seed ${SEED})`, { timeout: 120_000 }, async () => {
  // retry: 10 ms so 200 reconnections take well under a minute.
  // The proxy changes the port in Host, so the loopback Host guard is off for this test.
  const fixture = await startFixture({ retryMs: 10, keepAliveMs: 0, hostGuard: false });
  // One response per connection, so each connection's cut plan applies to one stream.
  fixture.listener.server.on('request', (_req, res) => {
    res.shouldKeepAlive = false;
  });
  const rand = prng(SEED);
  const proxy = await startChaosProxy({
    upstream: { host: '127.0.0.1', port: fixture.listener.port },
    plan: (index) => ({
      // Counted from the first notification in the response, so cuts land inside emit's stream.
      after: '"notifications/message"',
      cutAfterBytes: Math.floor(rand() * 90_000),
      mode: index % 2 === 0 ? 'fin' : 'rst',
    }),
  });
  const url = new URL(`http://127.0.0.1:${proxy.port}/mcp`);
  const alarms: DivergenceReport[] = [];
  const transport = new ContinuityClientTransport(url, {
    reconnect: { initialDelayMs: 5, maxDelayMs: 50 },
    onDivergence: (r) => alarms.push(r),
  });
  const client = new Client({ name: 'cuts', version: '1.0.0' });
  let seqs: number[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    const data = n.params.data as { seq?: number } | undefined;
    if (n.params.logger === 'emit' && typeof data?.seq === 'number') seqs.push(data.seq);
  });
  try {
    await client.connect(transport);
    let calls = 0;
    while (proxy.cuts < CUTS) {
      assert.ok(calls < 200, `only ${proxy.cuts} cuts after ${calls} calls (seed ${SEED})`);
      seqs = [];
      const result = await client.callTool({ name: 'emit', arguments: { count: EVENTS } });
      calls++;
      assert.deepEqual(result.structuredContent, { emitted: EVENTS }, `call ${calls} result (seed ${SEED})`);
      const report = deliveryReport(seqs, EVENTS);
      assert.deepEqual(
        { lost: report.lost, duplicated: report.duplicated, reordered: report.reordered, unexpected: report.unexpected },
        { lost: 0, duplicated: 0, reordered: 0, unexpected: 0 },
        `call ${calls} after ${proxy.cuts} cuts (seed ${SEED})`,
      );
    }
    assert.equal(alarms.length, 0, `false alarms: ${JSON.stringify(alarms.map((a) => a.code))} (seed ${SEED})`);
    assert.ok(proxy.cuts >= CUTS, `cuts: ${proxy.cuts}`);
  } finally {
    await client.close();
    await proxy.close();
    await fixture.close();
  }
});
