/**
 * The drain and takeover bounds, with real `serve` processes on a real (private) Redis:
 * - a drain's bound holds whatever the store does: with Redis paused (`CLIENT PAUSE`) the
 *   replica exits within its `--drain-ms` plus one second (the acceptance's own bound);
 * - requests that meet a takeover in progress (two replicas racing to take over a session
 *   whose owner died) are answered within one lease: served by the new owner, or refused
 *   retryably as not accepted — never held for a lease and a half.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ContinuityClientTransport } from '../../src/client/index.js';
import { redisStore } from '../../src/store/redis/index.js';
import type { Store } from '../../src/store/types.js';
import { redisCommand, startRedis, type RedisServer } from '../helpers/redis.js';
import { startReplica, type Replica } from '../helpers/replicas.js';
import { initialize, rpc, send, sessionHeaders } from '../helpers/sse-client.js';
import { waitFor, within } from '../helpers/wait.js';

const LEASE_MS = 1000;
const DRAIN_MS = 3000;

describe('the drain bound with Redis paused (CLIENT PAUSE)', () => {
  for (const scene of ['a call in flight', 'idle sessions'] as const) {
    it(`${scene}: the replica exits within --drain-ms + 1 s`, { timeout: 60_000 }, async (t) => {
      const redis: RedisServer = await startRedis();
      t.after(() => redis.stop());
      const replica = await startReplica(`${redis.url}?leaseMs=${LEASE_MS}`, ['--drain-ms', String(DRAIN_MS)]);
      t.after(() => replica.kill('SIGKILL'));
      const clients: Client[] = [];
      t.after(() => Promise.all(clients.map((c) => c.close().catch(() => {}))));
      for (let i = 0; i < 2; i++) {
        const client = new Client({ name: `paused-${i}`, version: '1.0.0' });
        await client.connect(new ContinuityClientTransport(replica.url, { reconnect: { initialDelayMs: 20, maxDelayMs: 200 } }));
        await client.setLoggingLevel('error');
        clients.push(client);
      }
      if (scene === 'a call in flight') {
        const progress: number[] = [];
        void (clients[0] as Client)
          .callTool({ name: 'emit', arguments: { count: 400, intervalMs: 15 } }, undefined, { onprogress: (p) => progress.push(p.progress), timeout: 60_000 })
          .catch(() => {});
        await waitFor(() => progress.length >= 3, 'the call to be under way');
      }
      assert.match(await redisCommand(redis.port, ['CLIENT', 'PAUSE', '60000', 'ALL']), /^\+OK/);
      const exited = new Promise<number | null>((resolve) => replica.child.once('exit', (code) => resolve(code)));
      const signalled = Date.now();
      replica.child.kill('SIGTERM');
      const code = await within(exited, 'the replica to exit', 30_000);
      const ms = Date.now() - signalled;
      t.diagnostic(`${scene}: exited ${ms} ms after SIGTERM (--drain-ms ${DRAIN_MS})`);
      assert.ok(ms <= DRAIN_MS + 1000, `exited ${ms} ms after SIGTERM`);
      assert.equal(code, 0, 'a clean exit');
    });
  }
});

describe('requests meeting a takeover in progress (three replicas on Redis)', () => {
  let redis: RedisServer;
  let store: Store;
  const replicas: Replica[] = [];
  before(async () => {
    redis = await startRedis();
    const spec = `${redis.url}?leaseMs=${LEASE_MS}`;
    replicas.push(...(await Promise.all([0, 1, 2].map(() => startReplica(spec)))));
    store = await redisStore({ url: spec });
  });
  after(async () => {
    await Promise.all(replicas.map((r) => r.kill('SIGKILL')));
    await store?.close().catch(() => {});
    await redis?.stop();
  });

  it('two replicas racing to take over a dead owner’s session answer every request within one lease', { timeout: 60_000 }, async () => {
    const [owner, second, third] = replicas as [Replica, Replica, Replica];
    const h = await initialize(owner.url);
    assert.equal((await store.ownership.current(h.sessionId))?.owner !== undefined, true, 'the session has an owner');
    await owner.kill('SIGKILL');
    await waitFor(async () => (await store.ownership.current(h.sessionId)) === undefined, "the dead owner's lease to lapse");
    // Four calls on each of the two others at once: one of them wins the lease and rebuilds
    // the session; the other's are carried to it while it does.
    const results = await Promise.all(
      [second, third, second, third, second, third, second, third].map(async (replica) => {
        const started = Date.now();
        const response = await send(replica.url, {
          body: rpc('tools/call', { name: 'emit', arguments: { count: 1, intervalMs: 0 } }),
          headers: sessionHeaders(h),
        });
        return { response, ms: Date.now() - started };
      }),
    );
    for (const [i, { response, ms }] of results.entries()) {
      assert.ok(ms < LEASE_MS, `request ${i}: answered after ${ms} ms (${response.status})`);
      if (response.status === 200) {
        assert.ok(
          response.events.some((e) => e.data.includes('"result"')),
          `request ${i}: served`,
        );
        continue;
      }
      assert.equal(response.status, 503, `request ${i}: served or refused retryably, got ${response.status} ${response.text}`);
      const reason = (JSON.parse(response.text) as { error: { data: { reason?: string } } }).error.data.reason;
      assert.ok(['owner-unavailable', 'server-draining'].includes(reason as string), `request ${i}: not accepted, got ${reason}`);
      assert.ok(response.headers['retry-after'] !== undefined, `request ${i}: Retry-After`);
    }
    assert.ok(
      results.some((r) => r.response.status === 200),
      'the session was taken over',
    );
  });
});
