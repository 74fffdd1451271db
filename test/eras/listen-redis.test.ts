/**
 * The modern leg across replicas: `subscriptions/listen` on replica A hears a
 * `tools/list_changed` published on replica B, over the Redis store's pub/sub
 * (`redisServerEventBus`). Two endpoints, two sockets, one real Redis.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createEndpoint } from '../../src/server/index.js';
import { listen, type Listener } from '../../src/node/index.js';
import { createExampleServer } from '../../src/example/index.js';
import { createExampleHandler } from '../../src/example/modern/index.js';
import { redisStore, redisServerEventBus, type RedisServerEventBus } from '../../src/store/redis/index.js';
import type { Store } from '../../src/store/types.js';
import { SHARED_REDIS_URL, randomPrefix, redisOrSkip } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait.js';

const MODERN = '2026-07-28';

interface Replica {
  store: Store;
  bus: RedisServerEventBus;
  listener: Listener;
  errors: Error[];
}

async function replica(keyPrefix: string, key: string): Promise<Replica> {
  const errors: Error[] = [];
  const store = await redisStore({ url: SHARED_REDIS_URL, keyPrefix });
  const bus = await redisServerEventBus(store, { onError: (e) => errors.push(e) });
  const endpoint = createEndpoint({
    store,
    server: () => createExampleServer(),
    modern: createExampleHandler({ bus, requestStateKey: key }),
    onError: (e) => errors.push(e),
  });
  return { store, bus, listener: await listen(endpoint, { port: 0 }), errors };
}

async function modernClient(url: URL): Promise<Client> {
  const client = new Client({ name: 'modern', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN } } });
  await client.connect(new StreamableHTTPClientTransport(url));
  return client;
}

describe('subscriptions/listen across replicas, over Redis', async () => {
  const run = await redisOrSkip('the modern leg across replicas');
  const replicas: Replica[] = [];
  before(async () => {
    if (!run) return;
    const prefix = randomPrefix('eras');
    const key = 'k'.repeat(32);
    replicas.push(await replica(prefix, key), await replica(prefix, key));
  });
  after(async () => {
    for (const r of replicas) {
      await r.listener.close();
      await r.bus.close();
      await r.store.close();
    }
  });

  test('a tools/list_changed published on B reaches a listen stream on A', { skip: !run }, async () => {
    const [a, b] = replicas as [Replica, Replica];
    const onA = await modernClient(a.listener.url);
    const onB = await modernClient(b.listener.url);
    try {
      let heard = 0;
      onA.setNotificationHandler('notifications/tools/list_changed', () => {
        heard++;
      });
      const subscription = await onA.listen({ toolsListChanged: true });
      assert.equal(heard, 0);
      await onB.callTool({ name: 'test_trigger_tool_change', arguments: {} });
      await waitFor(() => heard === 1, 'the listen stream on A to hear the change published on B');
      await subscription.close();
      assert.deepEqual([...a.errors, ...b.errors], []);
    } finally {
      await onA.close();
      await onB.close();
    }
  });

  test('a multi-round call may take its rounds on different replicas (one requestState key)', { skip: !run }, async () => {
    const [a, b] = replicas as [Replica, Replica];
    // Round 1 through A, round 2 through B: the state sealed on A verifies on B.
    const first = await fetch(a.listener.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': MODERN,
        'mcp-method': 'tools/call',
        'mcp-name': 'test_input_required_result_request_state',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'test_input_required_result_request_state',
          arguments: {},
          _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } },
        },
      }),
    });
    const round1 = (await first.json()) as { result: { resultType: string; requestState: string } };
    assert.equal(round1.result.resultType, 'input_required');
    const second = await fetch(b.listener.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': MODERN,
        'mcp-method': 'tools/call',
        'mcp-name': 'test_input_required_result_request_state',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: {
          name: 'test_input_required_result_request_state',
          arguments: {},
          inputResponses: { confirm: { action: 'accept', content: { ok: true } } },
          requestState: round1.result.requestState,
          _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } },
        },
      }),
    });
    const round2 = await second.text();
    assert.match(round2, /state-ok/);
  });
});
