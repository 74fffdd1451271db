/**
 * Forwarding fidelity on real Redis: a POST carried from a non-owner to the owner hands
 * the tool the same `authInfo` (a `URL` and a `Date` included) as a POST made on the owner,
 * and no credential (the Authorization and Cookie values) goes over Redis, as `MONITOR`
 * on a second connection shows.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { IncomingMessage } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { listen, type Listener } from '../../src/node/index.js';
import { createEndpoint } from '../../src/server/index.js';
import { redisStore } from '../../src/store/redis/index.js';
import type { Store } from '../../src/store/types.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';
import { initialize, messages, rpc, send, sessionHeaders, type Handshake } from '../helpers/sse-client.js';
import { waitFor } from '../helpers/wait.js';

const TOKEN = 'tok-5ecret-b4d9e1';
const COOKIE = 'sid=c00kie-77a1f3';

/** What a host typically derives: the SDK's AuthInfo shape, with a URL and a Date in it. */
function authInfoOf(req: IncomingMessage): unknown {
  const bearer = (req.headers.authorization ?? '').replace(/^Bearer /, '');
  return {
    clientId: bearer === TOKEN ? 'app' : 'nobody',
    scopes: ['mcp', 'tools'],
    expiresAt: 1_900_000_000,
    resource: new URL('https://mcp.example.com/tools?x=1'),
    extra: { sub: 'alice', issuedAt: new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 6)), tags: new Set(['a']), none: undefined, $: 'dollar' },
  };
}

/** Everything a Redis server executes while it runs, read on its own connection. */
async function monitor(port: number): Promise<{ text(): string; stop(): void }> {
  const socket: Socket = connect({ host: '127.0.0.1', port });
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (text += chunk));
  socket.on('error', () => {});
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  socket.write('*1\r\n$7\r\nMONITOR\r\n');
  await waitFor(() => text.startsWith('+OK'), 'MONITOR to start');
  return { text: () => text, stop: () => socket.destroy() };
}

describe('forwarding fidelity (Redis)', () => {
  let redis: RedisServer;
  const stores: Store[] = [];
  const listeners: Listener[] = [];
  /** authInfo as each tool run saw it, with the replica that ran it. */
  const seen: Array<{ ranOn: string; authInfo: unknown; authorization: unknown }> = [];
  before(async () => {
    redis = await startRedis();
    for (const replicaId of ['f0', 'f1']) {
      const store = await redisStore({ url: redis.url });
      stores.push(store);
      const endpoint = createEndpoint({
        store,
        cluster: { leaseMs: 1000, replicaId },
        server: () => {
          const server = new McpServer({ name: 'whoami', version: '1.0.0' });
          server.registerTool('whoami', { description: 'Records the caller as the tool sees it' }, (extra) => {
            seen.push({ ranOn: replicaId, authInfo: extra.authInfo, authorization: extra.requestInfo?.headers.authorization });
            return { content: [{ type: 'text', text: 'ok' }] };
          });
          return server;
        },
      });
      listeners.push(await listen(endpoint, { port: 0, authInfo: authInfoOf }));
    }
  });
  after(async () => {
    for (const l of listeners) await l.close().catch(() => {});
    for (const s of stores) await s.close().catch(() => {});
    await redis?.stop();
  });

  const at = (i: number): URL => (listeners[i] as Listener).url;
  const call = (i: number, h: Handshake) =>
    send(at(i), {
      body: rpc('tools/call', { name: 'whoami', arguments: {} }),
      headers: sessionHeaders(h, { authorization: `Bearer ${TOKEN}`, cookie: COOKIE }),
    });

  it('authInfo is deep-equal on the owner and through a non-owner, and MONITOR shows no Authorization or Cookie value', async () => {
    const h = await initialize(at(0)); // f0 owns the session
    const direct = await call(0, h);
    assert.equal(direct.status, 200);
    const watch = await monitor(redis.port);
    let carried;
    try {
      carried = await call(1, h);
      await waitFor(() => watch.text().includes(':inbox'), 'the carried POST to show in MONITOR');
    } finally {
      watch.stop();
    }
    assert.equal(carried.status, 200);
    assert.ok('result' in (messages(carried.events).at(-1) as object), 'the carried call completed');
    assert.equal(seen.length, 2);
    const [onOwner, throughOther] = seen as [(typeof seen)[0], (typeof seen)[0]];
    assert.equal(onOwner.ranOn, 'f0');
    assert.equal(throughOther.ranOn, 'f0', 'the carried call ran on the owner');
    assert.deepStrictEqual(throughOther.authInfo, onOwner.authInfo);
    const info = throughOther.authInfo as { resource: unknown; extra: { issuedAt: unknown } };
    assert.ok(info.resource instanceof URL, 'resource is a URL');
    assert.ok(info.extra.issuedAt instanceof Date, 'a Date in extra is a Date');
    assert.equal(onOwner.authorization, `Bearer ${TOKEN}`, 'on the owner, the tool sees the request it reached');
    assert.equal(throughOther.authorization, undefined, 'a carried request has no credential headers');
    const log = watch.text();
    assert.ok(!log.includes(TOKEN), 'no Authorization value on Redis');
    assert.ok(!log.includes('c00kie-77a1f3'), 'no Cookie value on Redis');
  });
});
