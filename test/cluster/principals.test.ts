/**
 * Principals in a cluster on real Redis: the default encoding of a token's client ID and
 * subject cannot collide, and another principal's request is refused like an unknown
 * session before anything is admitted, rebuilt or taken over (even with the process full).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { IncomingMessage } from 'node:http';
import { createExampleServer } from '../../src/example/index.js';
import { principalOfAuth } from '../../src/frameworks/body.js';
import { listen, type Listener } from '../../src/node/index.js';
import { createEndpoint, type Endpoint } from '../../src/server/index.js';
import { redisStore } from '../../src/store/redis/index.js';
import type { Store } from '../../src/store/types.js';
import { dropPrefix, randomPrefix, redisOrSkip, SHARED_REDIS_URL } from '../helpers/redis.js';
import { rpc, send } from '../helpers/sse-client.js';

const available = await redisOrSkip('the cluster principal tests');

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'p', version: '0' } },
};

/** The principal the way the Express adapter derives it by default, from test headers. */
function principal(req: IncomingMessage): string | undefined {
  const clientId = req.headers['x-client'];
  const sub = req.headers['x-sub'];
  if (typeof clientId !== 'string') return undefined;
  return principalOfAuth({ clientId, ...(typeof sub === 'string' ? { extra: { sub } } : {}) });
}

describe('principals in a cluster (Redis)', { skip: !available }, () => {
  const prefix = randomPrefix('principals');
  const stores: Store[] = [];
  const listeners: Listener[] = [];
  const endpoints: Endpoint[] = [];
  /** Server factory calls per replica, by kind. */
  const built = [
    { fresh: 0, rebuilt: 0 },
    { fresh: 0, rebuilt: 0 },
  ];
  before(async () => {
    for (let i = 0; i < 2; i++) {
      const store = await redisStore({ url: SHARED_REDIS_URL, keyPrefix: prefix });
      stores.push(store);
      const count = built[i] as { fresh: number; rebuilt: number };
      const endpoint = createEndpoint({
        store,
        // Replica 1 holds one session at most: "the process is full".
        limits: i === 1 ? { maxSessions: 1 } : {},
        cluster: { leaseMs: 600, replicaId: `p${i}` },
        server: ({ rehydrating }) => {
          if (rehydrating) count.rebuilt++;
          else count.fresh++;
          return createExampleServer();
        },
      });
      endpoints.push(endpoint);
      listeners.push(await listen(endpoint, { port: 0, principal }));
    }
  });
  after(async () => {
    for (const l of listeners) await l.close().catch(() => {});
    for (const s of stores) await s.close().catch(() => {});
    await dropPrefix(prefix);
  });

  const at = (i: number): URL => (listeners[i] as Listener).url;
  const headers = (who: Record<string, string>, sessionId?: string): Record<string, string> => ({
    'mcp-protocol-version': '2025-11-25',
    ...who,
    ...(sessionId ? { 'mcp-session-id': sessionId } : {}),
  });
  async function open(replica: number, who: Record<string, string>): Promise<string> {
    const r = await send(at(replica), { body: INIT, headers: headers(who) });
    assert.equal(r.status, 200, r.text);
    return r.headers['mcp-session-id'] as string;
  }

  it('the default encoding cannot collide: a client ID spelled ["app","alice"] does not reach app/alice’s session', async () => {
    assert.notEqual(principalOfAuth({ clientId: '["app","alice"]' }), principalOfAuth({ clientId: 'app', extra: { sub: 'alice' } }));
    assert.notEqual(principalOfAuth({ clientId: '["app"]' }), principalOfAuth({ clientId: 'app' }));
    const alice = { 'x-client': 'app', 'x-sub': 'alice' };
    const sessionId = await open(0, alice);
    const own = await send(at(0), { body: rpc('tools/list'), headers: headers(alice, sessionId) });
    assert.equal(own.status, 200, 'app/alice reaches the session');
    for (const replica of [0, 1]) {
      const forged = await send(at(replica), { body: rpc('tools/list'), headers: headers({ 'x-client': '["app","alice"]' }, sessionId) });
      assert.equal(forged.status, 404, `replica ${replica}: the forged client ID gets 404`);
    }
  });

  it('a wrong principal gets the same answer for a real session as for an unknown one, and causes no rebuild or takeover, even with the process full', async () => {
    const alice = { 'x-client': 'app', 'x-sub': 'alice' };
    const sessionId = await open(0, alice);
    // The owner lets the session go (as on a clean stop or passivation): it is at rest in
    // Redis with no live lease, so the next request for it would be a rebuild and a takeover.
    await endpoints[0]?.close();
    const store = stores[1] as Store;
    assert.equal(await store.ownership.current(sessionId), undefined, 'no live lease');
    // Replica 1 is full: it holds carol's session.
    await open(1, { 'x-client': 'carol' });
    const before = { ...(built[1] as object) };
    const bob = { 'x-client': 'bob' };
    for (const method of ['POST', 'GET', 'DELETE'] as const) {
      const ask = (id: string) =>
        send(at(1), {
          method,
          headers: headers(bob, id),
          ...(method === 'POST' ? { body: rpc('tools/list', {}, 7) } : {}),
          timeoutMs: 5_000,
        });
      const real = await ask(sessionId);
      const unknown = await ask('u'.repeat(32));
      assert.equal(real.status, 404, `${method}: 404 for a real session (${real.text})`);
      assert.equal(real.status, unknown.status, `${method}: same status`);
      assert.equal(real.text, unknown.text, `${method}: same body`);
    }
    assert.deepEqual(built[1], before, 'no session was built or rebuilt for the wrong principal');
    assert.equal(await store.ownership.current(sessionId), undefined, 'no takeover: the session still has no live lease');
    // The session's own principal does reach admission (replica 1 is full, so: session-limit).
    const own = await send(at(1), { body: rpc('tools/list'), headers: headers(alice, sessionId) });
    assert.equal(own.status, 503, 'alice’s own request reaches admission');
  });
});
