/**
 * The example server's bounds on what a client can make it hold or do, with the official
 * SDK client as the peer: resource subscriptions only for resources that exist, and
 * boundedly many per session (each is held for the session's life, so an unbounded set
 * grew the server's memory at a client's will); `emit` bounded in total bytes, not only
 * per event and in count.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ErrorCode, LoggingMessageNotificationSchema, McpError, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { createExampleServer, EMIT_MAX_TOTAL_BYTES, MAX_SUBSCRIPTIONS, WATCHED_RESOURCE_URI } from '../../src/example/index.js';

async function refusal(promise: Promise<unknown>): Promise<McpError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(error instanceof McpError, `an McpError, got ${String(error)}`);
  return error;
}

describe('example server: resource subscriptions', () => {
  let client: Client;
  const updates: string[] = [];
  before(async () => {
    const server = createExampleServer();
    const [a, b] = InMemoryTransport.createLinkedPair();
    client = new Client({ name: 'subscriptions-test', version: '0' });
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updates.push(n.params.uri));
    await Promise.all([server.connect(b), client.connect(a)]);
  });
  after(() => client.close());

  it('a subscriber to the watched resource hears of its update', async () => {
    await client.subscribeResource({ uri: WATCHED_RESOURCE_URI });
    const result = await client.callTool({ name: 'update_watched_resource', arguments: {} });
    assert.match(JSON.stringify(result.content), /subscriber notified/);
    assert.deepEqual(updates, [WATCHED_RESOURCE_URI]);
  });

  it('a resource that does not exist → -32002 resource not found', async () => {
    for (const uri of ['x://nothing', 'test://static-text/extra', `test://template/${'a'.repeat(300)}/data`]) {
      assert.equal((await refusal(client.subscribeResource({ uri }))).code, -32002, uri);
    }
  });

  it(`at most ${MAX_SUBSCRIPTIONS} per session; the same one again, or after an unsubscribe, is fine`, async () => {
    // The watched resource is one already.
    for (let i = 1; i < MAX_SUBSCRIPTIONS; i++) await client.subscribeResource({ uri: `test://template/${i}/data` });
    const full = await refusal(client.subscribeResource({ uri: 'test://template/extra/data' }));
    assert.equal(full.code, ErrorCode.InvalidParams);
    await client.subscribeResource({ uri: 'test://template/1/data' });
    await client.unsubscribeResource({ uri: 'test://template/1/data' });
    await client.subscribeResource({ uri: 'test://template/extra/data' });
  });
});

describe('example server: emit', () => {
  let client: Client;
  let logged = 0;
  before(async () => {
    const server = createExampleServer();
    const [a, b] = InMemoryTransport.createLinkedPair();
    client = new Client({ name: 'emit-limit-test', version: '0' });
    client.setNotificationHandler(LoggingMessageNotificationSchema, () => void logged++);
    await Promise.all([server.connect(b), client.connect(a)]);
  });
  after(() => client.close());

  it(`count × bytes above ${EMIT_MAX_TOTAL_BYTES} is refused before anything is sent`, async () => {
    const bytes = 1024 * 1024;
    const count = EMIT_MAX_TOTAL_BYTES / bytes + 1;
    const result = await client.callTool({ name: 'emit', arguments: { count, bytes } });
    assert.equal(result.isError, true, JSON.stringify(result).slice(0, 200));
    assert.match(JSON.stringify(result.content), /at most/);
    assert.equal(logged, 0);
    const ok = await client.callTool({ name: 'emit', arguments: { count: 2, bytes } });
    assert.notEqual(ok.isError, true);
    assert.equal(logged, 2);
  });
});
