/**
 * One set of example tools for both eras: the 2026-07-28 leg lists every tool the
 * 2025-era leg lists (from the same table, with the same schemas), and runs them: `emit`
 * with its logs and progress, a question to the user as an `input_required` round. Once
 * in process on a real socket, once against a real `mcp-continuity serve` process.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { createExampleHandler } from '../../src/example/modern/index.js';
import { startFixture, type Fixture } from '../helpers/fixture.js';
import { waitFor, within } from '../helpers/wait.js';

const MODERN = '2026-07-28';
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface ListedTool {
  name: string;
  inputSchema?: unknown;
  outputSchema?: unknown;
}

async function toolsOverV1(url: URL): Promise<ListedTool[]> {
  const client = new ClientV1({ name: 'era-2025', version: '1.0.0' });
  await client.connect(new TransportV1(url));
  try {
    return (await client.listTools()).tools;
  } finally {
    await client.close();
  }
}

async function modernClient(url: URL): Promise<ClientV2> {
  const client = new ClientV2({ name: 'era-2026', version: '1.0.0' }, { versionNegotiation: { mode: { pin: MODERN } } });
  await client.connect(new TransportV2(url));
  return client;
}

async function toolsOverV2(url: URL): Promise<ListedTool[]> {
  const client = await modernClient(url);
  try {
    return (await client.listTools()).tools;
  } finally {
    await client.close();
  }
}

/**
 * A listed schema without the SDK's default dialect: the SDK v1 marks what it converts
 * draft-07, the SDK v2 2020-12; a schema that names its own dialect keeps it.
 */
function undialected(schema: unknown): unknown {
  if (typeof schema !== 'object' || schema === null) return schema;
  const { $schema, ...rest } = schema as Record<string, unknown>;
  const sdkDefault =
    $schema === 'http://json-schema.org/draft-07/schema#' || ($schema === 'https://json-schema.org/draft/2020-12/schema' && !('$defs' in rest));
  return sdkDefault ? rest : schema;
}

/** The 2025-era tools the modern leg lacks, or lists with other schemas (key order aside). */
function missingOrDifferent(legacy: ListedTool[], modern: ListedTool[]): string[] {
  const byName = new Map(modern.map((t) => [t.name, t]));
  const problems: string[] = [];
  for (const tool of legacy) {
    const twin = byName.get(tool.name);
    if (!twin) problems.push(`${tool.name}: not listed`);
    else if (!isDeepStrictEqual(undialected(twin.inputSchema), undialected(tool.inputSchema))) {
      problems.push(`${tool.name}: input schema ${JSON.stringify(twin.inputSchema)} ≠ ${JSON.stringify(tool.inputSchema)}`);
    } else if (!isDeepStrictEqual(undialected(twin.outputSchema), undialected(tool.outputSchema))) {
      problems.push(`${tool.name}: output schema ${JSON.stringify(twin.outputSchema)} ≠ ${JSON.stringify(tool.outputSchema)}`);
    }
  }
  return problems;
}

function modernPost(url: URL, id: number, params: object): Promise<Response> {
  const name = (params as { name: string }).name;
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      'mcp-method': 'tools/call',
      'mcp-name': name,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params }),
  });
}

const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': { elicitation: {}, sampling: {} },
  'io.modelcontextprotocol/clientInfo': { name: 'era-2026', version: '1.0.0' },
};

describe('one tool table, both eras (in process)', () => {
  let f: Fixture;
  before(async () => {
    f = await startFixture({ modern: createExampleHandler() });
  });
  after(() => f.close());

  test('tools/list on the 2026-07-28 leg holds every 2025-era tool, with the same schemas, and the modern-only ones', async () => {
    const legacy = await toolsOverV1(f.url);
    const modern = await toolsOverV2(f.url);
    assert.ok(legacy.some((t) => t.name === 'emit') && legacy.length >= 20, 'the 2025-era leg lists the example tools');
    assert.deepEqual(missingOrDifferent(legacy, modern), []);
    for (const name of ['test_logging_tool', 'test_trigger_tool_change', 'test_input_required_result_request_state', 'test_missing_capability']) {
      assert.ok(
        modern.some((t) => t.name === name),
        `the modern conformance tool ${name} is still listed`,
      );
    }
  });

  test('emit runs on the 2026-07-28 leg: its logs and progress on the call, then its result', async () => {
    const client = await modernClient(f.url);
    try {
      const logs: unknown[] = [];
      client.setNotificationHandler('notifications/message', (n) => {
        logs.push(n.params.data);
      });
      const progress: number[] = [];
      // Logs on the stateless leg are the request's opt-in: its _meta names the level.
      const result = await client.callTool(
        { name: 'emit', arguments: { count: 5 }, _meta: { 'io.modelcontextprotocol/logLevel': 'info' } },
        { onprogress: (p) => progress.push(p.progress) },
      );
      assert.deepEqual(result.structuredContent, { emitted: 5 });
      assert.deepEqual(
        logs.map((d) => (d as { seq: number }).seq),
        [1, 2, 3, 4, 5],
      );
      assert.deepEqual(progress, [1, 2, 3, 4, 5]);
    } finally {
      await client.close();
    }
  });

  test("emit's count × bytes bound holds on the 2026-07-28 leg too, answered as on the 2025-era leg (a tool error)", async () => {
    const answer = await modernPost(f.url, 1, { name: 'emit', arguments: { count: 100_000, bytes: 1024 * 1024 }, _meta: ENVELOPE });
    const body = (await answer.json()) as { result?: { isError?: boolean; content: unknown } };
    assert.equal(body.result?.isError, true, JSON.stringify(body));
    assert.match(JSON.stringify(body.result.content), /count × bytes is at most/);
  });

  test('the log level is per request on the 2026-07-28 leg: tally at warning never sends its filtered infos', async () => {
    const client = await modernClient(f.url);
    try {
      const logs: { level: string; data: unknown }[] = [];
      client.setNotificationHandler('notifications/message', (n) => {
        logs.push({ level: n.params.level, data: n.params.data });
      });
      const result = await client.callTool({ name: 'tally', arguments: { id: 'lvl', steps: 2 }, _meta: { 'io.modelcontextprotocol/logLevel': 'warning' } });
      assert.equal((result.structuredContent as { runs: number }).runs, 1);
      assert.deepEqual(
        logs.map((l) => l.level),
        ['warning', 'warning'],
      );
    } finally {
      await client.close();
    }
  });

  test('update_watched_resource on the 2026-07-28 leg reaches a subscriptions/listen stream that names the resource', async () => {
    const listener = await modernClient(f.url);
    const caller = await modernClient(f.url);
    try {
      const updated: string[] = [];
      listener.setNotificationHandler('notifications/resources/updated', (n) => {
        updated.push(n.params.uri);
      });
      const subscription = await listener.listen({ resourceSubscriptions: ['test://watched-resource'] });
      const result = await caller.callTool({ name: 'update_watched_resource', arguments: {} });
      assert.match(JSON.stringify(result.content), /revision 1, listeners notified/);
      await waitFor(() => updated.length === 1, 'the listen stream to hear the watched resource change');
      assert.deepEqual(updated, ['test://watched-resource']);
      const read = await caller.readResource({ uri: 'test://watched-resource' });
      assert.match(JSON.stringify(read.contents), /revision 1\./);
      await subscription.close();
    } finally {
      await listener.close();
      await caller.close();
    }
  });

  test('elicit asks in an input_required round on the 2026-07-28 leg, and answers once the next round carries the answer', async () => {
    const first = (await (await modernPost(f.url, 1, { name: 'elicit', arguments: { message: 'Your name?' }, _meta: ENVELOPE })).json()) as {
      result: { resultType: string; inputRequests: Record<string, { method: string; params: { message: string } }> };
    };
    assert.equal(first.result.resultType, 'input_required', JSON.stringify(first));
    const [key, asked] = Object.entries(first.result.inputRequests)[0] ?? [];
    assert.equal(asked?.method, 'elicitation/create');
    assert.equal(asked.params.message, 'Your name?');
    const second = (await (
      await modernPost(f.url, 2, {
        name: 'elicit',
        arguments: { message: 'Your name?' },
        inputResponses: { [key as string]: { action: 'accept', content: { answer: 'Ada' } } },
        _meta: ENVELOPE,
      })
    ).json()) as { result: { structuredContent: unknown } };
    assert.deepEqual(second.result.structuredContent, { action: 'accept', answer: 'Ada' });
  });
});

/** `mcp-continuity serve` on a free port (memory store); resolves with its URL. */
async function startServe(): Promise<{ url: URL; child: ChildProcess }> {
  const child = spawn(process.execPath, [join(ROOT, 'dist/cli/main.js'), 'serve', '--port', '0', '--quiet', '--store', 'memory'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout });
  const url = await within(
    new Promise<string>((resolve, reject) => {
      lines.on('line', (line) => {
        const found = /https?:\/\/\S+/.exec(line);
        if (found) resolve(found[0]);
      });
      child.once('exit', (code) => reject(new Error(`serve exited with ${code} before printing its URL`)));
    }),
    'serve to print its URL',
  );
  return { url: new URL(url), child };
}

describe('one tool table, both eras (a real serve process)', () => {
  let served: { url: URL; child: ChildProcess };
  before(async () => {
    served = await startServe();
  });
  after(async () => {
    const exited = new Promise((resolve) => served.child.once('exit', resolve));
    served.child.kill('SIGINT');
    await within(exited, 'serve to exit');
  });

  test("serve lists the same example tools on both legs: the modern leg's list holds the 2025-era one", async () => {
    const legacy = await toolsOverV1(served.url);
    const modern = await toolsOverV2(served.url);
    assert.ok(legacy.length >= 20, `the 2025-era leg lists its tools (${legacy.length})`);
    assert.deepEqual(missingOrDifferent(legacy, modern), []);
    const client = await modernClient(served.url);
    try {
      const result = await client.callTool({ name: 'emit', arguments: { count: 2 } });
      assert.deepEqual(result.structuredContent, { emitted: 2 });
    } finally {
      await client.close();
    }
  });
});
