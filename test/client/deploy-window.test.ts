/**
 * The client rides through a deploy window: a call made while the only server is down
 * succeeds once it is back, within the retry bound, and reaches the server exactly once;
 * the outage is reported once, typed. A 503 the server gave before accepting a request
 * (`server-draining`) is retried; `terminateSession()` fails typed.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ContinuityClientTransport } from '../../src/client/index.js';
import { ContinuityError } from '../../src/protocol/errors.js';
import { createEndpoint, type Endpoint } from '../../src/server/index.js';
import { listen, type Listener } from '../../src/node/index.js';
import { sqliteStore } from '../../src/store/sqlite/index.js';
import type { Store } from '../../src/store/types.js';
import { tempFiles } from '../helpers/temp-files.js';
import { waitFor, within } from '../helpers/wait.js';

const files = tempFiles('mcpc-deploy-window-');

/** Calls of the `count` tool received by any server instance of this process. */
let received = 0;
function countingServer(): McpServer {
  const server = new McpServer({ name: 'counting', version: '1.0.0' });
  server.registerTool('count', { description: 'Counts its calls.' }, () => {
    received++;
    return { content: [{ type: 'text', text: String(received) }] };
  });
  return server;
}

interface Up {
  store: Store;
  endpoint: Endpoint;
  listener: Listener;
}

async function up(path: string, port = 0): Promise<Up> {
  const store = sqliteStore({ path });
  const endpoint = createEndpoint({ server: countingServer, store, keepAliveMs: 0 });
  const listener = await listen(endpoint, { port });
  return { store, endpoint, listener };
}

async function down(u: Up): Promise<void> {
  await u.listener.close();
  await u.store.close();
  // Let the client's side see the FIN of its idle keep-alive connections (a restart takes
  // longer than one turn): a request written on a socket the server closed may have
  // reached it, as far as anyone can tell, and is rightly never sent again.
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
}

describe('the deploy window', () => {
  it('a call made while the only server is down succeeds once it is back, received exactly once', async (t) => {
    const path = files.path('window');
    let server = await up(path);
    const port = server.listener.port;
    let refused = 0;
    const errors: Error[] = [];
    const transport = new ContinuityClientTransport(server.listener.url, {
      standaloneStream: false,
      reconnect: { initialDelayMs: 50, maxDelayMs: 400, maxRequestAttempts: 40 },
      fetch: async (url, init) => {
        try {
          return await fetch(url, init);
        } catch (error) {
          if ((error as { cause?: { code?: string } }).cause?.code === 'ECONNREFUSED') refused++;
          throw error;
        }
      },
    });
    transport.onerror = (e) => errors.push(e);
    const client = new Client({ name: 'window', version: '1.0.0' });
    await client.connect(transport);
    t.after(async () => {
      await client.close().catch(() => {});
      await down(server);
    });
    received = 0;
    await down(server);
    const downAt = Date.now();
    const call = client.callTool({ name: 'count', arguments: {} });
    // The window of the acceptance: the server stays down 2 s (and refuses the call a few times).
    await waitFor(() => refused >= 3 && Date.now() - downAt >= 2000, 'the call to be refused for 2 s while the server is down');
    server = await up(path, port);
    const outageMs = Date.now() - downAt;
    const result = await within(call, 'the call to succeed once the server is back', 30_000);
    assert.deepEqual(result.content, [{ type: 'text', text: '1' }]);
    assert.equal(received, 1, 'received exactly once');
    console.log(`# down ${outageMs} ms, ${refused} refused attempts, one call`);
    const outages = errors.filter((e) => e instanceof ContinuityError && e.code === 'server-unreachable');
    assert.equal(outages.length, 1, `one onerror for the outage, not one per attempt: ${errors.map((e) => e.message).join('; ')}`);
  });

  it('gives up after the retry bound with a typed, retryable error, and never ran it', async () => {
    received = 0;
    const server = await up(files.path('bound'));
    const transport = new ContinuityClientTransport(server.listener.url, {
      standaloneStream: false,
      reconnect: { initialDelayMs: 5, maxDelayMs: 10, maxRequestAttempts: 3 },
    });
    const client = new Client({ name: 'bound', version: '1.0.0' });
    await client.connect(transport);
    await down(server);
    await assert.rejects(
      client.callTool({ name: 'count', arguments: {} }),
      (e: unknown) => e instanceof ContinuityError && e.code === 'server-unreachable' && e.retryable,
    );
    assert.equal(received, 0);
    await assert.rejects(
      transport.terminateSession(),
      (e: unknown) => e instanceof ContinuityError && e.code === 'server-unreachable',
      'terminateSession() fails typed',
    );
    await client.close();
  });

  it('a 503 server-draining for a request not accepted is retried until another server takes it', async (t) => {
    received = 0;
    const path = files.path('draining');
    const first = await up(path);
    const port = first.listener.port;
    const client = new Client({ name: 'draining', version: '1.0.0' });
    const transport = new ContinuityClientTransport(first.listener.url, {
      standaloneStream: false,
      reconnect: { initialDelayMs: 20, maxDelayMs: 200, maxRequestAttempts: 40 },
    });
    await client.connect(transport);
    // The session goes idle and leaves memory: a draining process does not rebuild it (503, Retry-After).
    let draining = first.endpoint.close({ drainMs: 60_000 });
    await waitFor(() => first.endpoint.sessionCount === 0 && first.endpoint.draining, 'the drain to let the session go');
    const call = client.callTool({ name: 'count', arguments: {} });
    await waitFor(() => received === 0, 'nothing ran');
    // The drained process goes away; its successor on the same address takes the retried request.
    await first.listener.close();
    await draining;
    await first.store.close();
    draining = Promise.resolve();
    const next = await up(path, port);
    t.after(() => down(next));
    const result = await within(call, 'the call to succeed on the next process', 30_000);
    assert.deepEqual(result.content, [{ type: 'text', text: '1' }]);
    assert.equal(received, 1);
    await client.close();
  });
});
