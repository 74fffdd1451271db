/**
 * A subscription survives a takeover, every time. Two replicas on Redis (`leaseMs` 1000)
 * behind a round robin; the client sets its log level to `error` and subscribes to the
 * watched resource; the owner is killed with kill -9 and from then on all traffic goes to
 * the survivor. The survivor rebuilds the session and the update of the watched resource
 * reaches the client on the standalone stream.
 *
 * Each seeded run picks the client transport (ours or the official one), where the
 * standalone stream was open before the kill (on the owner, or on the survivor, tailing
 * the shared log) and how long after the kill the next request comes (at once, while the
 * dead owner's lease still holds, or after it lapsed): a fault parameter, not a wait.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ContinuityClientTransport } from '../../src/client/index.js';
import { redisStore } from '../../src/store/redis/index.js';
import type { Store } from '../../src/store/types.js';
import { prng } from '../helpers/prng.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';
import { assertNoCrash, startReplica, type Replica } from '../helpers/replicas.js';
import { startRoundRobin } from '../helpers/round-robin.js';
import { lastingProbe } from '../integration/lasting-probe.js';

const LEASE_MS = 1000;
const RUNS = Number(process.env.TAKEOVER_RUNS ?? 20);
/** Runs at a time: each mostly waits on a lease, and 20 in a row would take minutes. */
const PARALLEL = 4;

describe('a resource subscription across a takeover (two replicas, round robin, owner killed)', () => {
  let redis: RedisServer;
  let store: Store;
  let spec: string;
  before(async () => {
    redis = await startRedis();
    spec = `${redis.url}?leaseMs=${LEASE_MS}`;
    store = await redisStore({ url: spec });
  });
  after(async () => {
    await store?.close().catch(() => {});
    await redis?.stop();
  });

  /** One run; `survivor` is its lane's long-lived replica (only the owner is new each run). */
  async function run(seed: number, survivor: Replica): Promise<void> {
    const random = prng(seed);
    const kind = random() < 0.5 ? 'ours' : 'sdk';
    // The round robin's rotation decides where the standalone GET lands: the initialize goes
    // to the owner, the next request to the survivor, the GET to the slot after that.
    const getOnSurvivor = random() < 0.5;
    const delayMs = Math.floor(random() * 1.5 * LEASE_MS);
    const owner = await startReplica(spec);
    const proxy = await startRoundRobin(getOnSurvivor ? [owner.url, survivor.url, survivor.url] : [owner.url, survivor.url]);
    const transport: Transport =
      kind === 'sdk'
        ? new StreamableHTTPClientTransport(proxy.url)
        : new ContinuityClientTransport(proxy.url, { reconnect: { initialDelayMs: 20, maxDelayMs: 200 } });
    const client = new Client({ name: `subscription-${seed}`, version: '1.0.0' });
    const probe = lastingProbe(client);
    const what = `seed ${seed} (${kind} client, GET on the ${getOnSurvivor ? 'survivor' : 'owner'}, next request ${delayMs} ms after the kill)`;
    try {
      proxy.rotateTo(0);
      await client.connect(transport);
      const session = transport.sessionId as string;
      await probe.set();
      const before = await store.ownership.current(session);
      assert.ok(before !== undefined, `${what}: the session has an owner`);
      await owner.kill('SIGKILL');
      proxy.setUpstreams([survivor.url]);
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      await probe.holds(what);
      assert.equal(transport.sessionId, session, `${what}: the same session`);
      const now = await store.ownership.current(session);
      assert.ok(now !== undefined && now.owner !== before.owner, `${what}: the survivor owns it now`);
      assertNoCrash([survivor]);
    } finally {
      await client.close().catch(() => {});
      await proxy.close();
      await owner.kill('SIGKILL');
    }
  }

  it(`the subscribed update arrives after the takeover in ${RUNS} of ${RUNS} seeded runs`, { timeout: 600_000 }, async () => {
    const seeds = Array.from({ length: RUNS }, (_, i) => 501 + i);
    const failed: string[] = [];
    const lanes = await Promise.all(Array.from({ length: PARALLEL }, () => startReplica(spec)));
    try {
      await Promise.all(
        lanes.map(async (survivor, lane) => {
          for (let i = lane; i < seeds.length; i += PARALLEL) {
            await run(seeds[i] as number, survivor).catch((error: unknown) => failed.push(error instanceof Error ? error.message : String(error)));
          }
        }),
      );
    } finally {
      await Promise.all(lanes.map((r) => r.kill('SIGKILL')));
    }
    assert.deepEqual(failed, [], 'runs where the takeover lost the subscription (or more)');
  });
});
