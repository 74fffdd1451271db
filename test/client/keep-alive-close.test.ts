/**
 * A request written to a kept-alive connection the server closed while it was idle. What
 * undici (Node's fetch) reports depends on how it was closed, and only one case proves the
 * request never reached the server:
 * - reset (RST) before the write: the write fails, `ECONNRESET` with `syscall: 'write'`.
 *   The server cannot hold the request, so the client sends it again, on a new connection,
 *   at once and without reporting an outage; the counting server runs it exactly once.
 * - closed (FIN) before the write: the kernel takes the write, undici then reads the close
 *   (`UND_ERR_SOCKET`, "other side closed"). A server that read the request and then died
 *   looks the same, so the client never sends it again: the call fails typed.
 * The closes are made when the client cannot have seen them yet (same turn of the event
 * loop as the call), the window a restart or an idle timeout leaves open.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ContinuityClientTransport } from '../../src/client/index.js';
import { ContinuityError } from '../../src/protocol/errors.js';
import { createEndpoint } from '../../src/server/index.js';
import { listen, type Listener } from '../../src/node/index.js';
import { memoryStore } from '../../src/store/memory/index.js';

const NODE_MAJOR = Number(process.versions.node.split('.')[0]);

interface Served {
  readonly listener: Listener;
  /** Calls of the `count` tool this server ran. */
  readonly received: () => number;
  /** Closes every connection the server holds, as an idle timeout or a restart does. */
  closeIdle(how: 'reset' | 'close'): void;
  close(): Promise<void>;
}

async function serve(): Promise<Served> {
  let received = 0;
  const server = (): McpServer => {
    const s = new McpServer({ name: 'counting', version: '1.0.0' });
    s.registerTool('count', { description: 'Counts its calls.' }, () => {
      received++;
      return { content: [{ type: 'text', text: String(received) }] };
    });
    return s;
  };
  const store = memoryStore();
  const endpoint = createEndpoint({ server, store, keepAliveMs: 0 });
  const listener = await listen(endpoint, { port: 0 });
  const sockets = new Set<Socket>();
  listener.server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  return {
    listener,
    received: () => received,
    closeIdle(how) {
      for (const socket of sockets) {
        if (how === 'reset') socket.resetAndDestroy();
        else socket.destroy();
      }
    },
    async close() {
      await listener.close();
      await store.close();
    },
  };
}

async function connected(served: Served): Promise<{ client: Client; transport: ContinuityClientTransport; errors: Error[] }> {
  // No standalone stream: between calls, the client's connections are all idle.
  const transport = new ContinuityClientTransport(served.listener.url, { standaloneStream: false, reconnect: { initialDelayMs: 20, maxDelayMs: 200 } });
  const errors: Error[] = [];
  const client = new Client({ name: 'keep-alive', version: '1.0.0' });
  await client.connect(transport);
  transport.onerror = (e) => errors.push(e);
  // A first call: the connection it used is kept alive, idle, for the next.
  assert.deepEqual((await client.callTool({ name: 'count', arguments: {} })).content, [{ type: 'text', text: '1' }]);
  return { client, transport, errors };
}

describe('a request on a kept-alive connection the server closed', () => {
  it('reset before the request was written: sent again on a new connection, run exactly once, no outage reported', async (t) => {
    const served = await serve();
    const { client, errors } = await connected(served);
    t.after(async () => {
      await client.close().catch(() => {});
      await served.close();
    });
    served.closeIdle('reset');
    const call = client.callTool({ name: 'count', arguments: {} });
    if (NODE_MAJOR >= 22) {
      // Node 22's undici may take the reset of the last stale socket on its read side
      // ("read ECONNRESET"), which a server that read the request and died also gives: then
      // nothing proves the request never arrived, and the call fails typed instead. Either
      // way it runs at most once.
      const outcome = await call.then(
        (r) => ({ ok: true as const, r }),
        (e: unknown) => ({ ok: false as const, e }),
      );
      if (outcome.ok) {
        assert.deepEqual(outcome.r.content, [{ type: 'text', text: '2' }]);
        assert.equal(served.received(), 2, 'run exactly once');
      } else {
        assert.ok(
          outcome.e instanceof ContinuityError && outcome.e.code === 'request-abandoned' && outcome.e.detail?.mayHaveRun === true && !outcome.e.retryable,
          `typed: ${String(outcome.e)}`,
        );
        assert.equal(served.received(), 1, 'not run, and not sent twice');
      }
    } else {
      const result = await call;
      assert.deepEqual(result.content, [{ type: 'text', text: '2' }]);
      assert.equal(served.received(), 2, 'run exactly once');
    }
    assert.deepEqual(errors, [], 'a stale connection is no outage');
  });

  it('closed before the request was written: never sent again, the call fails typed', async (t) => {
    const served = await serve();
    const { client, errors } = await connected(served);
    t.after(async () => {
      await client.close().catch(() => {});
      await served.close();
    });
    served.closeIdle('close');
    await assert.rejects(client.callTool({ name: 'count', arguments: {} }), (e: unknown) => {
      assert.ok(e instanceof ContinuityError, `typed: ${String(e)}`);
      assert.equal(e.code, 'request-abandoned');
      assert.equal(e.detail?.mayHaveRun, true, 'the client cannot tell whether it ran');
      assert.equal(e.retryable, false, 'the client cannot tell whether it ran');
      return true;
    });
    // It did not run (the server closed first), but nothing on the client side could prove it.
    assert.equal(served.received(), 1);
    assert.deepEqual(errors, []);
    // The session goes on: the next call takes a new connection.
    assert.deepEqual((await client.callTool({ name: 'count', arguments: {} })).content, [{ type: 'text', text: '2' }]);
  });
});
