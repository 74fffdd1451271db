/**
 * The conformance suite's client under test: the official SDK `Client` on our
 * `ContinuityClientTransport`. The suite runs it as `<command> <serverUrl>` with the
 * scenario's name in MCP_CONFORMANCE_SCENARIO.
 *
 * The sse-retry scenario's server uses opaque event IDs ("event-N"); the transport's
 * default posture would re-initialize after the reconnect instead of trusting them, which
 * that scenario (about honouring `retry:` and sending Last-Event-ID) does not test, so
 * opaque IDs are trusted here.
 *
 * Elicitation: the client accepts every form with no content of its own and lets the SDK
 * fill in the schema's defaults (the elicitation-sep1034-client-defaults scenario).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { ContinuityClientTransport } from '../src/client/index.js';

const url = process.argv[process.argv.length - 1];
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
if (!url?.startsWith('http')) {
  console.error('usage: conformance-client <serverUrl>');
  process.exit(2);
}

const transport = new ContinuityClientTransport(new URL(url), { trustOpaqueIds: true });
transport.onerror = (error) => console.error(`[transport] ${error.message}`);
const client = new Client({ name: 'mcp-continuity-conformance', version: '0.1.0' }, { capabilities: { elicitation: { form: { applyDefaults: true } } } });
client.setRequestHandler(ElicitRequestSchema, () => ({ action: 'accept', content: {} }));
try {
  await client.connect(transport);
  const { tools } = await client.listTools();
  if (scenario === 'sse-retry' || tools.some((t) => t.name === 'test_reconnection')) {
    const result = await client.callTool({ name: 'test_reconnection', arguments: {} });
    console.log(JSON.stringify(result));
  } else if (tools.some((t) => t.name === 'test_client_elicitation_defaults')) {
    console.log(JSON.stringify(await client.callTool({ name: 'test_client_elicitation_defaults', arguments: {} })));
  } else if (tools.some((t) => t.name === 'add_numbers')) {
    console.log(JSON.stringify(await client.callTool({ name: 'add_numbers', arguments: { a: 5, b: 3 } })));
  }
} finally {
  await client.close();
}
