/**
 * Rehydration logic, in one process: endpoint A stops (as at a restart), endpoint B
 * opens the same durable store and serves A's sessions. The process-level version
 * (kill -9 of a child server on SQLite) lives with the SQLite store's tests.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEndpoint } from '../../src/server/index.js';
import { listen } from '../../src/node/index.js';
import { memoryStore } from '../../src/store/memory/index.js';
import type { Store } from '../../src/store/types.js';
import { createExampleServer } from '../../src/example/index.js';
import { initialize, messages, rpc, send, sessionHeaders } from '../helpers/sse-client.js';

/** The memory store, declared durable so the endpoint treats it as surviving a restart. */
function durableMemory(): Store {
  return { ...memoryStore(), durable: true };
}

async function start(store: Store) {
  const endpoint = createEndpoint({ server: () => createExampleServer(), store, keepAliveMs: 0 });
  return listen(endpoint, { port: 0 });
}

test('a restarted endpoint rehydrates the session, replays its streams and abandons the dead request', async () => {
  const store = durableMemory();
  const a = await start(store);
  const h = await initialize(a.url);
  // A slow call: cut the client after 5 notifications, then "restart" while it still runs.
  const call = rpc('tools/call', { name: 'emit', arguments: { count: 1000, intervalMs: 5 } });
  const first = await send(a.url, { body: call, headers: sessionHeaders(h), cutWhen: (_e, all) => all.length === 6 });
  await a.close();

  const b = await start(store);
  try {
    const url = b.url;
    const resumed = await send(url, { headers: sessionHeaders(h, { 'last-event-id': first.events.at(-1)?.id as string }), timeoutMs: 5000 });
    assert.equal(resumed.status, 200, resumed.text);
    assert.equal(resumed.headers['x-mcp-replay-epoch'], h.epoch, 'the log survived, so the epoch is unchanged');
    const final = messages(resumed.events).at(-1) as { id: unknown; error?: { code: number; data: { reason: string } } };
    assert.equal(final.id, call.id);
    assert.equal(final.error?.data.reason, 'request-abandoned');
    assert.equal(final.error?.code, -32003);
    // Reported from the log at once, not after a timeout: the stream ended by itself.
    assert.equal(resumed.timedOut, false, 'the resume ended with the abandonment');

    // The session itself works: a new call on the rehydrated session succeeds.
    const again = await send(url, { body: rpc('tools/call', { name: 'emit', arguments: { count: 3 } }), headers: sessionHeaders(h) });
    assert.equal(again.status, 200);
    const result = messages(again.events).at(-1) as { result?: { structuredContent?: { emitted: number } } };
    assert.equal(result.result?.structuredContent?.emitted, 3);
  } finally {
    await b.close();
  }
});

test('a non-durable store is never rehydrated from: another endpoint answers 404', async () => {
  const store = memoryStore();
  const a = await start(store);
  const h = await initialize(a.url);
  const b = await start(store);
  try {
    // The record is in the store (A still holds it), but a non-durable store's sessions
    // belong to the process that made them.
    assert.ok(await store.sessions.get(h.sessionId));
    const r = await send(b.url, { body: rpc('tools/list'), headers: sessionHeaders(h) });
    assert.equal(r.status, 404);
  } finally {
    await b.close();
    await a.close();
  }
});
