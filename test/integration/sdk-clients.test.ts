/**
 * The official SDK clients (v1 `@modelcontextprotocol/sdk`, v2 `@modelcontextprotocol/client`)
 * against our endpoint serving official SDK servers (v1 example server, v2 server):
 * list and call tools, receive progress, answer a sampling request.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { startFixture, type Fixture } from '../helpers/fixture.js';
import { createV2Server } from '../helpers/v2-server.js';

type Text = { type: string; text?: string };
type AnyClient = ClientV1 | ClientV2;
/** v1's callTool is (params, resultSchema, options); v2's is (params, options). */
function callWithProgress(client: AnyClient, name: string, args: Record<string, unknown>, onprogress: (p: { progress: number }) => void) {
  if (client instanceof ClientV2) return client.callTool({ name, arguments: args }, { onprogress });
  return client.callTool({ name, arguments: args }, undefined, { onprogress });
}
const firstText = (r: object): string => (r as { content?: Text[] }).content?.[0]?.text ?? '';

async function v1Client(url: URL): Promise<{ client: ClientV1; transport: TransportV1 }> {
  const client = new ClientV1({ name: 'v1-client', version: '1.0.0' }, { capabilities: { sampling: {} } });
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => ({
    model: 'test-model',
    role: 'assistant',
    content: { type: 'text', text: `v1 answers: ${JSON.stringify(request.params.messages[0]?.content)}` },
  }));
  const transport = new TransportV1(url);
  await client.connect(transport);
  return { client, transport };
}

async function v2Client(url: URL): Promise<{ client: ClientV2; transport: TransportV2 }> {
  const client = new ClientV2({ name: 'v2-client', version: '2.0.0' }, { capabilities: { sampling: {} } });
  client.setRequestHandler('sampling/createMessage', async (request) => ({
    model: 'test-model',
    role: 'assistant',
    content: { type: 'text', text: `v2 answers: ${JSON.stringify(request.params.messages[0]?.content)}` },
  }));
  const transport = new TransportV2(url);
  await client.connect(transport);
  return { client, transport };
}

describe('SDK v1 server (example server) on our endpoint', () => {
  let f: Fixture;
  before(async () => {
    f = await startFixture();
  });
  after(() => f.close());

  for (const [name, connect] of [
    ['v1', v1Client],
    ['v2', v2Client],
  ] as const) {
    test(`SDK ${name} client: tools, progress, sampling`, async () => {
      const { client, transport } = await connect(f.url);
      try {
        assert.ok(transport.sessionId, 'session id assigned');
        const { tools } = await client.listTools();
        const names = tools.map((t) => t.name);
        for (const expected of ['emit', 'test_sampling', 'test_tool_with_progress']) assert.ok(names.includes(expected), `${expected} listed`);

        const progress: number[] = [];
        const emitted = await callWithProgress(client, 'emit', { count: 25 }, (p) => progress.push(p.progress));
        assert.equal(firstText(emitted), 'emitted 25');
        assert.deepEqual(
          progress,
          Array.from({ length: 25 }, (_, i) => i + 1),
        );

        const sampled = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'ping?' } });
        assert.match(firstText(sampled), new RegExp(`${name} answers: .*ping\\?`));
      } finally {
        await transport.terminateSession();
        await client.close();
      }
    });
  }

  test('the session is gone after the client terminates it', async () => {
    const { client, transport } = await v1Client(f.url);
    const id = transport.sessionId as string;
    await transport.terminateSession();
    await client.close();
    assert.equal(await f.endpoint.store.sessions.get(id), undefined);
  });
});

describe('SDK v2 server on our endpoint', () => {
  let f: Fixture;
  before(async () => {
    f = await startFixture({ server: () => createV2Server() });
  });
  after(() => f.close());

  for (const [name, connect] of [
    ['v1', v1Client],
    ['v2', v2Client],
  ] as const) {
    test(`SDK ${name} client: tools, progress, sampling`, async () => {
      const { client, transport } = await connect(f.url);
      try {
        const { tools } = await client.listTools();
        assert.deepEqual(tools.map((t) => t.name).sort(), ['ask', 'countdown']);
        const progress: number[] = [];
        const result = await callWithProgress(client, 'countdown', { from: 5 }, (p) => progress.push(p.progress));
        assert.equal(firstText(result), 'liftoff after 5');
        assert.deepEqual(progress, [1, 2, 3, 4, 5]);
        const asked = await client.callTool({ name: 'ask', arguments: { question: 'hello' } });
        assert.match(firstText(asked), new RegExp(`model said: ${name} answers: .*hello`));
      } finally {
        await transport.terminateSession();
        await client.close();
      }
    });
  }
});
