/**
 * The server's operations record only names the server has: a registered or listed tool or
 * prompt keeps its name, anything else is `_OTHER` on the metric (the span keeps what was
 * sent, cut to 128 characters); a cut is counted; a JSON-RPC error carries
 * rpc.response.status_code. With the SDK registered in memory, as an application would.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Operations } from '../../src/telemetry/operations.js';
import { METRIC } from '../../src/telemetry/meter.js';
import { MAX_NAME_LENGTH, OTHER } from '../../src/telemetry/names.js';
import { registerOtel, type Otel } from '../helpers/otel.js';

let otel: Otel;
before(() => (otel = registerOtel()));
after(() => otel.close());

const call = (id: number, name: string) => ({ jsonrpc: '2.0' as const, id, method: 'tools/call', params: { name } });
const ok = (id: number, result: Record<string, unknown> = {}) => ({ jsonrpc: '2.0' as const, id, result });

test('a registered tool keeps its name, another is _OTHER on the metric and itself on the span', async () => {
  const ops = new Operations('server');
  ops.names?.useServer({ _registeredTools: { add: {} }, _registeredPrompts: { greet: {} } });
  ops.begin(call(1, 'add'), 's', '2025-11-25');
  ops.end(ok(1));
  ops.begin(call(2, 'made-up'), 's', '2025-11-25');
  ops.end(ok(2, { isError: true }));
  ops.begin({ jsonrpc: '2.0', id: 3, method: 'prompts/get', params: { name: 'greet' } }, 's', '2025-11-25');
  ops.end(ok(3));
  ops.begin({ jsonrpc: '2.0', id: 4, method: 'no/such/method' }, 's', '2025-11-25');
  ops.end({ jsonrpc: '2.0', id: 4, error: { code: -32601, message: 'Method not found' } });
  const m = await otel.collect();
  assert.equal(m.count(METRIC.serverOperationDuration, { 'gen_ai.tool.name': 'add' }), 1);
  assert.equal(m.count(METRIC.serverOperationDuration, { 'gen_ai.tool.name': OTHER, 'error.type': 'tool_error' }), 1);
  assert.equal(m.count(METRIC.serverOperationDuration, { 'gen_ai.prompt.name': 'greet' }), 1);
  assert.equal(m.count(METRIC.serverOperationDuration, { 'mcp.method.name': OTHER, 'rpc.response.status_code': '-32601' }), 1);
  const spans = otel.spans();
  assert.ok(spans.some((s) => s.name === 'tools/call made-up' && s.attributes['gen_ai.tool.name'] === 'made-up'));
  const unknown = spans.find((s) => s.name === 'no/such/method');
  assert.equal(unknown?.attributes['rpc.response.status_code'], '-32601');
  assert.equal(unknown?.attributes['mcp.method.name'], 'no/such/method');
});

test("a low-level server's own tools/list teaches its names", async () => {
  const ops = new Operations('server');
  ops.names?.useServer({});
  ops.begin(call(1, 'listed'), 's', undefined);
  ops.end(ok(1));
  ops.begin({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, 's', undefined);
  ops.end(ok(2, { tools: [{ name: 'listed' }, { name: 42 }, null] }));
  ops.begin(call(3, 'listed'), 's', undefined);
  ops.end(ok(3));
  const m = await otel.collect();
  assert.ok(m.count(METRIC.serverOperationDuration, { 'gen_ai.tool.name': 'listed' }) >= 1, 'known after the list');
});

test('a long name is cut to 128 characters and counted; the client side keeps its own names', async () => {
  const before = (await otel.collect()).count(METRIC.cutNames, { 'mcp_continuity.attribute': 'gen_ai.tool.name' });
  const server = new Operations('server');
  server.begin(call(1, 'y'.repeat(100_000)), 's', undefined);
  server.end(ok(1));
  const client = new Operations('client');
  client.begin(call(1, 'my-own-tool'), 's', undefined);
  client.end(ok(1));
  const m = await otel.collect();
  assert.equal(m.count(METRIC.cutNames, { 'mcp_continuity.attribute': 'gen_ai.tool.name' }) - before, 1);
  const span = otel.spans().find((s) => s.name.startsWith('tools/call yyy'));
  assert.equal(span?.name.length, 'tools/call '.length + MAX_NAME_LENGTH);
  assert.equal(m.count(METRIC.clientOperationDuration, { 'gen_ai.tool.name': 'my-own-tool' }), 1);
});
