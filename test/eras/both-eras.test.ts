/**
 * Both protocol eras on one URL: an SDK v1 client (2025-era, a session) and an SDK v2
 * client pinned to 2026-07-28 (no session) call a tool with progress on the same
 * endpoint; the router's shared guard, limits and body handling hold on both legs.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { createExampleHandler } from '../../src/example/modern/index.js';
import { startFixture, type Fixture } from '../helpers/fixture.js';

const MODERN = '2026-07-28';
const firstText = (r: object): string => (r as { content?: Array<{ text?: string }> }).content?.[0]?.text ?? '';

/** A modern-era request as a pinned SDK v2 client sends it. */
function modernCall(url: URL, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      'mcp-method': 'tools/list',
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}
const listTools = (id: number) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/list',
  params: { _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} } },
});

describe('one endpoint, both eras', () => {
  let f: Fixture;
  before(async () => {
    f = await startFixture({ modern: createExampleHandler(), limits: { maxBodyBytes: 64 * 1024 } });
  });
  after(() => f.close());

  test('an SDK v1 client gets a session, an SDK v2 modern client none; both see progress', async () => {
    const v1 = new ClientV1({ name: 'v1', version: '1.0.0' });
    const t1 = new TransportV1(f.url);
    await v1.connect(t1);
    const v2 = new ClientV2({ name: 'v2', version: '2.0.0' }, { versionNegotiation: { mode: { pin: MODERN } } });
    const t2 = new TransportV2(f.url);
    await v2.connect(t2);
    try {
      assert.ok(t1.sessionId, 'the 2025-era client has a session');
      assert.equal(t2.sessionId, undefined, 'the modern client has none');
      assert.equal(v2.getNegotiatedProtocolVersion?.() ?? MODERN, MODERN);
      assert.equal(f.endpoint.sessionCount, 1, 'only the 2025-era client made a session');

      const p1: number[] = [];
      const r1 = await v1.callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined, { onprogress: (p) => p1.push(p.progress) });
      const p2: number[] = [];
      const r2 = await v2.callTool({ name: 'test_tool_with_progress', arguments: {} }, { onprogress: (p) => p2.push(p.progress) });
      assert.equal(firstText(r1), 'Tool with progress executed successfully');
      assert.equal(firstText(r2), 'Tool with progress executed successfully');
      assert.deepEqual(p1, [0, 50, 100]);
      assert.deepEqual(p2, [0, 50, 100]);
      // The modern leg answered the modern client: its results carry the 2026 result type.
      assert.equal((r2 as { resultType?: string }).resultType ?? 'complete', 'complete');
      assert.equal(f.endpoint.sessionCount, 1);
    } finally {
      await t1.terminateSession();
      await v1.close();
      await v2.close();
    }
  });

  test('a modern request is answered by the modern leg, without a session id', async () => {
    const response = await modernCall(f.url, listTools(1));
    const text = await response.text();
    assert.equal(response.status, 200, text);
    assert.equal(response.headers.get('mcp-session-id'), null);
    assert.match(text, /"resultType":"complete"/);
    assert.match(text, /test_input_required_result_elicitation/);
  });

  test("a session id with a modern protocol version is still the modern leg's to answer", async () => {
    const response = await modernCall(f.url, listTools(5), { 'mcp-session-id': 'not-a-session-of-ours-at-all' });
    const text = await response.text();
    assert.equal(response.status, 200, text);
    assert.match(text, /"resultType":"complete"/);
  });

  test('the Host/Origin guard holds on the modern leg', async () => {
    const response = await modernCall(f.url, listTools(2), { origin: 'http://evil.example.com' });
    assert.equal(response.status, 403);
    assert.match(await response.text(), /origin/i);
  });

  test('a POST that is not JSON is refused before either leg (415)', async () => {
    const response = await modernCall(f.url, listTools(3), { 'content-type': 'text/plain' });
    assert.equal(response.status, 415);
  });

  test('limits.maxBodyBytes holds on the modern leg (413)', async () => {
    const big = listTools(4) as { params: Record<string, unknown> };
    big.params['padding'] = 'x'.repeat(70 * 1024);
    const response = await modernCall(f.url, big);
    assert.equal(response.status, 413);
  });

  test('a body that is not JSON goes to the 2025-era leg, which answers a parse error', async () => {
    const response = await modernCall(f.url, '{"jsonrpc":');
    assert.equal(response.status, 400);
    assert.match(await response.text(), /Parse error/);
  });
});
