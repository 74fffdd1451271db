/**
 * The run every framework mount must pass with the official SDK v1 client: initialize,
 * tools/list, a call with progress, and a resume after a TCP cut (through the chaos proxy,
 * in the middle of the call's stream).
 */
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startChaosProxy, type ChaosProxy } from '../../src/chaos/proxy.js';
import { within } from '../helpers/wait.js';

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1);

/** Runs the acceptance sequence against an app listening on `port` that mounts the endpoint on `path`. */
export async function acceptanceRun(port: number, path = '/mcp', requestInit?: RequestInit): Promise<{ cuts: number }> {
  // The first connection that carries emit's progress is cut (FIN) 3 KB into it; later
  // connections are left alone, so the client's resume goes through.
  const proxy: ChaosProxy = await startChaosProxy({
    upstream: { host: '127.0.0.1', port },
    plan: () => (proxy.cuts === 0 ? { after: '"notifications/progress"', cutAfterBytes: 3_000, mode: 'fin' } : {}),
  });
  const url = new URL(`http://127.0.0.1:${proxy.port}${path}`);
  const client = new Client({ name: 'framework-acceptance', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(url, {
    ...(requestInit ? { requestInit } : {}),
    reconnectionOptions: { initialReconnectionDelay: 10, maxReconnectionDelay: 100, reconnectionDelayGrowFactor: 1.5, maxRetries: 5 },
  });
  try {
    await within(client.connect(transport), 'initialize');
    assert.ok(transport.sessionId, 'initialize assigned a session');
    const { tools } = await within(client.listTools(), 'tools/list');
    assert.ok(
      tools.some((t) => t.name === 'emit'),
      'tools/list names emit',
    );

    const N = 200;
    const progress: number[] = [];
    const result = await within(
      client.callTool({ name: 'emit', arguments: { count: N, bytes: 64 } }, undefined, { onprogress: (p) => progress.push(p.progress), timeout: 20_000 }),
      'emit with progress across a cut',
      30_000,
    );
    assert.deepEqual(result.structuredContent, { emitted: N }, 'the call completed');
    assert.deepEqual(progress, range(N), 'progress 1..N, once each, in order, across the cut');
    assert.ok(proxy.cuts >= 1, 'the stream was cut and resumed');
    return { cuts: proxy.cuts };
  } finally {
    await client.close().catch(() => {});
    await proxy.close();
  }
}
