/**
 * A Redis primary with one replica, reached through a TCP "virtual IP" (the chaos proxy)
 * that a failover moves, and two replicas of the endpoint on it (in-process, each with its
 * own store connection). The scenes of a failover that loses acknowledged writes.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startChaosProxy, type ChaosProxy } from '../../src/chaos/proxy.js';
import { ContinuityClientTransport } from '../../src/client/index.js';
import { isContinuityError } from '../../src/protocol/errors.js';
import { redisStore, type RedisStoreOptions } from '../../src/store/redis/index.js';
import type { Store } from '../../src/store/types.js';
import { startFixture, type Fixture } from './fixture.js';
import { redisCommand, startRedis, type RedisServer } from './redis.js';
import { waitFor } from './wait.js';

/** Writes a marker on `port` and waits (WAIT) until one replica has everything written before it. */
function synced(port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    let data = '';
    socket.setEncoding('utf8');
    socket.once('error', reject);
    socket.once('connect', () => socket.write('*3\r\n$3\r\nSET\r\n$6\r\nmarker\r\n$1\r\n1\r\n*3\r\n$4\r\nWAIT\r\n$1\r\n1\r\n$4\r\n2000\r\n'));
    socket.on('data', (chunk: string) => {
      data += chunk;
      const m = /^\+OK\r\n:(\d+)\r\n/.exec(data);
      if (m) {
        socket.end();
        resolve(m[1] === '1');
      }
    });
  });
}

export interface Rig {
  primary: RedisServer;
  replica: RedisServer;
  /** The virtual IP the endpoints reach Redis through. */
  proxy: ChaosProxy;
  stores: Store[];
  replicas: Fixture[];
  stop(): Promise<void>;
}

export async function rig(extra: Partial<RedisStoreOptions> = {}): Promise<Rig> {
  const primary = await startRedis();
  const replica = await startRedis(['--replicaof', '127.0.0.1', String(primary.port)]);
  await waitFor(async () => (await redisCommand(replica.port, ['INFO', 'replication'])).includes('master_link_status:up'), 'the replica to sync');
  const proxy = await startChaosProxy({ upstream: { host: '127.0.0.1', port: primary.port } });
  const stores: Store[] = [];
  const replicas: Fixture[] = [];
  for (const replicaId of ['r0', 'r1']) {
    const store = await redisStore({
      url: `redis://127.0.0.1:${proxy.port}`,
      commandTimeoutMs: 1_000,
      maxReconnectDelayMs: 100,
      ...extra,
    } as RedisStoreOptions);
    stores.push(store);
    replicas.push(await startFixture({ store, cluster: { leaseMs: 600, replicaId }, retryMs: 50 }));
  }
  return {
    primary,
    replica,
    proxy,
    stores,
    replicas,
    async stop() {
      for (const r of replicas) await r.close().catch(() => {});
      for (const s of stores) await s.close().catch(() => {});
      await proxy.close();
      await primary.stop();
      await replica.stop();
    },
  };
}

/** Cuts replication: the replica keeps what it has and becomes a primary of its own. */
export async function cut(r: Rig): Promise<void> {
  assert.ok(await synced(r.primary.port), 'the replica had everything before the cut');
  assert.match(await redisCommand(r.replica.port, ['REPLICAOF', 'NO', 'ONE']), /^\+OK/);
}

/**
 * The replica starts lagging: it is stopped (SIGSTOP) and the primary drops its link, so
 * nothing written from now on reaches it; the primary goes on acknowledging writes.
 */
export async function lag(r: Rig): Promise<void> {
  assert.ok(await synced(r.primary.port), 'the replica had everything before it lagged');
  r.replica.pause();
  await redisCommand(r.primary.port, ['CLIENT', 'KILL', 'TYPE', 'replica']);
}

/** Until the endpoints' stores answer again (through the virtual IP, wherever it leads now). */
async function reached(r: Rig): Promise<void> {
  for (const store of r.stores) {
    await waitFor(
      () =>
        store.sessions.count().then(
          () => true,
          () => false,
        ),
      'the endpoint to reach the promoted replica',
    );
  }
}

/** The primary dies; the endpoints' connections now lead to the former replica, and they reach it. */
export async function failover(r: Rig): Promise<void> {
  r.proxy.setPlan(() => ({ upstream: { host: '127.0.0.1', port: r.replica.port } }));
  await r.primary.kill();
  await reached(r);
}

/**
 * After {@link lag}: the primary is killed (kill -9), the lagging replica resumes, is
 * promoted `promoteAfterMs` later (an operator's or Sentinel's reaction time, a fault
 * parameter), and the virtual IP moves to it.
 */
export async function laggingFailover(r: Rig, promoteAfterMs: number): Promise<void> {
  await r.primary.kill();
  r.replica.resume();
  await new Promise((resolve) => setTimeout(resolve, promoteAfterMs));
  assert.match(await redisCommand(r.replica.port, ['REPLICAOF', 'NO', 'ONE']), /^\+OK/);
  r.proxy.setPlan(() => ({ upstream: { host: '127.0.0.1', port: r.replica.port } }));
  await reached(r);
}

/** A call, retried while it meets a store that is briefly unreachable (that is not noticing anything). */
export async function callThrough(client: Client, count: number): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await client.callTool({ name: 'emit', arguments: { count } }, undefined, { timeout: 15_000 });
      return;
    } catch (error) {
      if (!(isContinuityError(error, 'store-unavailable') && attempt < 20)) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

export async function connectClient(
  url: URL,
  options: ConstructorParameters<typeof ContinuityClientTransport>[1] = {},
): Promise<{ client: Client; transport: ContinuityClientTransport }> {
  // A loaded machine can keep a replica from acknowledging within waitTimeoutMs: then the
  // initialize's stream ends before its answer, and a second try is what a client does.
  for (let attempt = 1; ; attempt++) {
    const transport = new ContinuityClientTransport(url, { reconnect: { initialDelayMs: 10, maxDelayMs: 100 }, ...options });
    const client = new Client({ name: 'failover', version: '1.0.0' });
    try {
      await client.connect(transport);
      return { client, transport };
    } catch (error) {
      await client.close().catch(() => {});
      if (attempt >= 3) throw error;
    }
  }
}
