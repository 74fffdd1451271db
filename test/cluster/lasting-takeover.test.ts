/**
 * A session taken over after its owner was killed (kill -9) is the same session: the log
 * level and the resource subscription its client set hold on the replica that rebuilt it,
 * for our client transport and the official one. Real `serve` processes on a real Redis.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ContinuityClientTransport } from '../../src/client/index.js';
import { redisStore } from '../../src/store/redis/index.js';
import type { Store } from '../../src/store/types.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';
import { startReplica, type Replica } from '../helpers/replicas.js';
import { startRoundRobin, type RoundRobin } from '../helpers/round-robin.js';
import { waitFor } from '../helpers/wait.js';
import { lastingProbe } from '../integration/lasting-probe.js';

const LEASE_MS = 1000;

describe('lasting session state across a takeover (Redis, owner killed)', () => {
  let redis: RedisServer;
  let store: Store;
  const replicas: Replica[] = [];
  let proxy: RoundRobin;
  let spec: string;
  before(async () => {
    redis = await startRedis();
    spec = `${redis.url}?leaseMs=${LEASE_MS}`;
    replicas.push(...(await Promise.all([0, 1, 2].map(() => startReplica(spec)))));
    proxy = await startRoundRobin(replicas.map((r) => r.url));
    store = await redisStore({ url: spec });
  });
  after(async () => {
    await proxy?.close();
    await Promise.all(replicas.map((r) => r.kill('SIGKILL')));
    await store?.close().catch(() => {});
    await redis?.stop();
  });

  for (const kind of ['ours', 'sdk'] as const) {
    it(`${kind} client transport: no info log after setLevel(error), and the subscribed update arrives`, async (t) => {
      // What the client lived through, for the failure message: a lost update names its cause.
      const seen: string[] = [];
      const transport: Transport =
        kind === 'sdk'
          ? new StreamableHTTPClientTransport(proxy.url, {
              reconnectionOptions: { initialReconnectionDelay: 20, maxReconnectionDelay: 200, reconnectionDelayGrowFactor: 1.5, maxRetries: 100 },
            })
          : new ContinuityClientTransport(proxy.url, {
              reconnect: { initialDelayMs: 20, maxDelayMs: 200 },
              onReconnect: (e) => seen.push(`reconnect ${e.stream} ${e.outcome} attempt ${e.attempt} after ${e.ms} ms`),
              onDivergence: (r) => seen.push(`divergence ${JSON.stringify(r)}`),
            });
      // Every replica alive, and the initialize goes to replica 0, which then owns the session.
      for (const [i, r] of replicas.entries()) if (!r.alive) replicas[i] = await startReplica(spec);
      proxy.setUpstreams(replicas.map((r) => r.url));
      const client = new Client({ name: `takeover-${kind}`, version: '1.0.0' });
      client.onerror = (error) => seen.push(`onerror ${(error as { code?: string }).code ?? ''} ${error.message}`);
      const probe = lastingProbe(client);
      proxy.rotateTo(0);
      await client.connect(transport);
      t.after(() => client.close().catch(() => {}));
      const session = transport.sessionId as string;
      await probe.set();
      const owner = (await store.ownership.current(session))?.owner;
      assert.ok(owner !== undefined, 'the session has an owner');
      await (replicas[0] as Replica).kill('SIGKILL');
      proxy.setUpstreams(replicas.slice(1).map((r) => r.url));
      // The client's next request comes once the dead owner's lease lapsed (one that comes
      // earlier gets a 503 to retry): whoever it reaches takes the session over and rebuilds it.
      await waitFor(async () => (await store.ownership.current(session)) === undefined, "the dead owner's lease to lapse");

      try {
        await probe.holds('after the takeover');
      } catch (error) {
        const owners = await store.ownership.current(session).catch(() => undefined);
        const logs = replicas.map((r, i) => `replica ${i} (${r.alive ? 'alive' : 'dead'}): ${r.stderr.slice(-10).join(' | ')}`);
        throw new Error(
          `${(error as Error).message}\nsession ${session}, now ${String(transport.sessionId)}, owner ${JSON.stringify(owners)}, requests per upstream ${JSON.stringify(proxy.counts)}\n` +
            `${seen.join('\n')}\n${logs.join('\n')}`,
        );
      }
      assert.equal(transport.sessionId, session, 'the same session');
      const now = (await store.ownership.current(session))?.owner;
      assert.ok(now !== undefined && now !== owner, 'another replica owns it now');
    });
  }
});
