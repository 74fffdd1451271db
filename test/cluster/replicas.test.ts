/**
 * Three real `serve` processes on one Redis (a private `redis-server`), behind a proxy that
 * sends each request, and each reconnect, to the next replica: resumes, official SDK
 * clients and our client, a sampling answer through a non-owner.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { EventSourceMessage } from 'eventsource-parser';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { ContinuityClientTransport } from '../../src/client/index.js';
import { parseEventId } from '../../src/protocol/event-id.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';
import { startReplica, type Replica } from '../helpers/replicas.js';
import { startRoundRobin, type RoundRobin } from '../helpers/round-robin.js';
import { initialize, messages, rpc, send, sessionHeaders } from '../helpers/sse-client.js';
import { deliveryReport } from '../helpers/stream-server.js';
import { callThroughCuts, cutPoints } from '../helpers/cut-resume.js';
import type { ProbeReport } from '../../src/cli/probe/model.js';
import { runCli } from '../cli/run-cli.js';

const SEED = Number(process.env.CLUSTER_SEED ?? 20261130);
const ZERO = { lost: 0, duplicated: 0, reordered: 0, unexpected: 0 };

function emitSeqs(events: EventSourceMessage[]): number[] {
  return messages(events)
    .filter((m) => m.method === 'notifications/message')
    .map((m) => (m.params as { data: { seq: number } }).data.seq);
}

describe('three replicas on Redis behind a round-robin proxy', () => {
  let redis: RedisServer;
  const replicas: Replica[] = [];
  let proxy: RoundRobin;
  before(async () => {
    redis = await startRedis();
    const spec = `${redis.url}?leaseMs=1000`;
    // Any port of 127.0.0.1 may be in Host: the probe's proxy passes the client's Host on.
    replicas.push(...(await Promise.all([0, 1, 2].map(() => startReplica(spec, ['--allowed-hosts', '127.0.0.1'])))));
    proxy = await startRoundRobin(replicas.map((r) => r.url));
  });
  after(async () => {
    await proxy?.close();
    await Promise.all(replicas.map((r) => r.kill('SIGTERM')));
    await redis?.stop();
  });

  test(`a 1,000-event call cut at 50 seeded points, each resume on the next replica: 0 lost, duplicated, reordered (seed ${SEED})`, async () => {
    const h = await initialize(proxy.url);
    const cuts = cutPoints(SEED, 50, 1000);
    const { all, cutsLanded } = await callThroughCuts(proxy.url, h, 'emit', { count: 1000 }, cuts, SEED);
    assert.ok(cutsLanded >= 50, `all 50 cuts landed (${cutsLanded})`);
    assert.deepEqual({ ...deliveryReport(emitSeqs(all), 1000), received: undefined }, { ...ZERO, received: undefined }, `seed ${SEED} cuts ${cuts.join(',')}`);
    const seqs = all.map((e) => parseEventId(e.id as string).seq);
    assert.deepEqual(
      seqs,
      seqs.map((_, i) => i + 1),
      `seed ${SEED}: event ids contiguous across replicas`,
    );
    assert.ok(
      proxy.counts.every((n) => n > 10),
      `every replica served requests: ${proxy.counts.join(',')}`,
    );
  });

  test('a sampling request answered through a non-owner reaches the tool on the owner', async () => {
    const [a, b, c] = replicas.map((r) => r.url) as [URL, URL, URL];
    const h = await initialize(a);
    let answered = false;
    const response = await send(b, {
      body: rpc('tools/call', { name: 'sample', arguments: { prompt: 'ping' } }),
      headers: sessionHeaders(h),
      cutWhen: (event) => {
        const m = event.data === '' ? undefined : (JSON.parse(event.data) as { method?: string; id?: number });
        if (m?.method === 'sampling/createMessage' && !answered) {
          answered = true;
          const reply = { jsonrpc: '2.0', id: m.id, result: { role: 'assistant', content: { type: 'text', text: 'pong via c' }, model: 'm' } };
          void send(c, { body: reply, headers: sessionHeaders(h) });
        }
        return false;
      },
    });
    const last = messages(response.events).at(-1) as { result?: { content?: Array<{ text?: string }> } };
    assert.equal(last.result?.content?.[0]?.text, 'pong via c');
  });

  const clients = {
    'SDK v1': async (url: URL) => {
      const client = new ClientV1({ name: 'v1', version: '1.0.0' });
      await client.connect(new TransportV1(url));
      return {
        list: () => client.listTools(),
        call: (onprogress: () => void) => client.callTool({ name: 'emit', arguments: { count: 20 } }, undefined, { onprogress }),
        close: () => client.close(),
      };
    },
    'SDK v2': async (url: URL) => {
      const client = new ClientV2({ name: 'v2', version: '2.0.0' });
      await client.connect(new TransportV2(url));
      return {
        list: () => client.listTools(),
        call: (onprogress: () => void) => client.callTool({ name: 'emit', arguments: { count: 20 } }, { onprogress }),
        close: () => client.close(),
      };
    },
    ours: async (url: URL) => {
      const client = new ClientV1({ name: 'ours', version: '1.0.0' });
      await client.connect(new ContinuityClientTransport(url));
      return {
        list: () => client.listTools(),
        call: (onprogress: () => void) => client.callTool({ name: 'emit', arguments: { count: 20 } }, undefined, { onprogress }),
        close: () => client.close(),
      };
    },
  };
  for (const [name, connect] of Object.entries(clients)) {
    test(`${name} client through the proxy: tools/list and a call with progress`, async () => {
      const c = await connect(proxy.url);
      try {
        const { tools } = await c.list();
        assert.ok(tools.some((t) => t.name === 'emit'));
        let progress = 0;
        const result = await c.call(() => progress++);
        assert.deepEqual((result as { structuredContent?: unknown }).structuredContent, { emitted: 20 });
        assert.equal(progress, 20);
      } finally {
        await c.close();
      }
    });
  }

  test('our probe through the proxy passes every check that passes on one replica', { timeout: 120_000 }, async () => {
    const verdicts = async (url: URL): Promise<Record<string, string>> => {
      const r = await runCli(['probe', url.href, '--json'], { timeoutMs: 100_000 });
      const report = JSON.parse(r.stdout) as ProbeReport;
      return Object.fromEntries(report.checks.map((c) => [c.id, `${c.verdict}: ${c.detail}`]));
    };
    const alone = await verdicts((replicas[0] as Replica).url);
    // A balancer that passes Host on, so the probe's foreign Host reaches the replicas' guard.
    const balancer = await startRoundRobin(
      replicas.map((r) => r.url),
      '/mcp',
      { preserveHost: true },
    );
    const balanced = await verdicts(balancer.url).finally(() => balancer.close());
    const lost = Object.entries(alone)
      .filter(([id, verdict]) => verdict.startsWith('pass') && !balanced[id]?.startsWith('pass'))
      .map(([id]) => `${id}: ${balanced[id] ?? 'missing'}`);
    assert.deepEqual(lost, [], 'every check that passes on one replica passes through the proxy');
  });
});
