/**
 * Failover across real `serve` processes on one Redis: the owner killed (kill -9) or
 * paused (SIGSTOP) in the middle of a call, Redis unreachable, Redis restarted empty.
 */
import { ContinuityError } from '../../src/protocol/errors.js';
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { EventSourceMessage } from 'eventsource-parser';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ContinuityClientTransport, memoryCheckpoint } from '../../src/client/index.js';
import { parseEventId } from '../../src/protocol/event-id.js';
import { redisStore } from '../../src/store/redis/index.js';
import type { Store } from '../../src/store/types.js';
import { redisCommand, startRedis, type RedisServer } from '../helpers/redis.js';
import { assertNoCrash, startReplica, type Replica } from '../helpers/replicas.js';
import { startRoundRobin, type RoundRobin } from '../helpers/round-robin.js';
import { initialize, messages, rpc, send, sessionHeaders } from '../helpers/sse-client.js';
import { waitFor, within } from '../helpers/wait.js';

const LEASE_MS = 1000;

type Reason = { data?: { reason?: string } };

describe('failover: three replicas on Redis', () => {
  let redis: RedisServer;
  let store: Store;
  const replicas: Replica[] = [];
  let proxy: RoundRobin;
  let spec: string;
  before(async () => {
    // Appends are on disk before they are acknowledged, so a killed Redis comes back with
    // everything it accepted ("unreachable", not "lost its data").
    redis = await startRedis(['--appendonly', 'yes', '--appendfsync', 'always']);
    spec = `${redis.url}?leaseMs=${LEASE_MS}`;
    replicas.push(...(await Promise.all([0, 1, 2].map(() => startReplica(spec)))));
    proxy = await startRoundRobin(replicas.map((r) => r.url));
    store = await redisStore({ url: spec, connectTimeoutMs: 20_000, commandTimeoutMs: 1000 });
  });
  // Whatever a test does to Redis or to one replica, no replica ends on its own.
  afterEach(() => assertNoCrash(replicas));
  after(async () => {
    await proxy?.close();
    await Promise.all(replicas.map((r) => r.kill('SIGKILL')));
    await store?.close().catch(() => {});
    await redis?.stop();
  });

  /** Replaces a dead replica by a fresh process (a replica swap). */
  async function replace(index: number): Promise<void> {
    replicas[index] = await startReplica(spec);
    proxy.setUpstreams(replicas.map((r) => r.url));
  }

  test('owner killed mid-call: request-abandoned within the lease, and the next call succeeds in the same session', async (t) => {
    const checkpoint = memoryCheckpoint();
    const transport = new ContinuityClientTransport(proxy.url, { checkpoint, reconnect: { initialDelayMs: 10, maxDelayMs: 100 } });
    const client = new Client({ name: 'kill', version: '1.0.0' });
    proxy.rotateTo(0); // initialize lands on replica 0, which then owns the session
    await client.connect(transport);
    t.after(() => client.close());
    // The standalone GET holds a position first. A GET whose priming event the kill loses
    // reconnects without a cursor, and the new owner starts it at its next priming event:
    // the verifier cannot tell that skip from lost messages and reports a gap (which then
    // ends the call instead of request-abandoned). That race is not what this test is about.
    await waitFor(async () => {
      const saved = await checkpoint.load();
      return saved?.standalone !== undefined && saved.streams[saved.standalone]?.lastId !== undefined;
    }, 'the standalone stream to hold a position');
    const session = transport.sessionId as string;
    const owner = (await store.ownership.current(session))?.owner;
    assert.ok(owner, 'the session has an owner');
    let progress = 0;
    const call = client.callTool({ name: 'emit', arguments: { count: 100_000, intervalMs: 10 } }, undefined, { onprogress: () => progress++, timeout: 60_000 });
    const outcome = call.then(
      () => 'completed',
      (error: unknown) => error as Reason,
    );
    await waitFor(() => progress >= 5, 'the call to be under way');
    await (replicas[0] as Replica).kill('SIGKILL');
    const killedAt = Date.now();
    const error = await within(outcome, 'the abandoned call to end', 20_000);
    const elapsed = Date.now() - killedAt;
    assert.notEqual(error, 'completed');
    assert.equal((error as Reason).data?.reason, 'request-abandoned', String(error));
    console.log(`# request-abandoned ${elapsed} ms after kill -9 (lease ${LEASE_MS} ms)`);
    const next = await client.callTool({ name: 'emit', arguments: { count: 3 } });
    assert.deepEqual(next.structuredContent, { emitted: 3 });
    assert.equal(transport.sessionId, session, 'same session');
    assert.notEqual((await store.ownership.current(session))?.owner, owner, 'another replica owns it');
    await replace(0);
  });

  for (const kind of ['ours', 'sdk'] as const) {
    test(`owner killed while idle: the first call through a survivor waits for the lease and succeeds in the same session (${kind} client)`, async (t) => {
      const transport = kind === 'ours' ? new ContinuityClientTransport(proxy.url) : new StreamableHTTPClientTransport(proxy.url);
      const client = new Client({ name: `idle-${kind}`, version: '1.0.0' });
      proxy.rotateTo(0); // initialize lands on replica 0, which then owns the session
      await client.connect(transport);
      t.after(() => client.close());
      const session = transport.sessionId as string;
      const owner = (await store.ownership.current(session))?.owner;
      assert.ok(owner, 'the session has an owner');
      assert.deepEqual((await client.callTool({ name: 'emit', arguments: { count: 1 } })).structuredContent, { emitted: 1 });
      await (replicas[0] as Replica).kill('SIGKILL');
      const killedAt = Date.now();
      const next = await client.callTool({ name: 'emit', arguments: { count: 3 } });
      console.log(`# ${kind} client: first call after the idle owner died answered in ${Date.now() - killedAt} ms (lease ${LEASE_MS} ms)`);
      assert.deepEqual(next.structuredContent, { emitted: 3 });
      assert.equal(transport.sessionId, session, 'same session');
      assert.notEqual((await store.ownership.current(session))?.owner, owner, 'a survivor owns it');
      await replace(0);
    });
  }

  test('owner paused until another replica took over, then resumed: no event of the old owner after the takeover', async () => {
    const [a, b] = replicas.map((r) => r.url) as [URL, URL];
    const h = await initialize(a);
    const owner = (await store.ownership.current(h.sessionId))?.owner;
    const request = rpc('tools/call', { name: 'emit', arguments: { count: 100_000, intervalMs: 5 } });
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    // Tailed through replica 1: it carries the POST to the owner and streams the log back.
    const tail = send(b, { body: request, headers: sessionHeaders(h), timeoutMs: 30_000, cutWhen: (_e, all) => (all.length === 10 && started(), false) });
    await running;
    (replicas[0] as Replica).child.kill('SIGSTOP');
    try {
      // Replica 1's tail watches the lease; once it lapses, replica 1 takes the session over.
      const taken = await waitFor(
        async () => {
          const lease = await store.ownership.current(h.sessionId);
          return lease && lease.owner !== owner ? lease : undefined;
        },
        'another replica to take the session over',
        20_000,
      );
      const done = await within(tail, 'the tail to end', 20_000);
      const last = messages(done.events).at(-1) as { id?: unknown } & { error?: Reason };
      assert.deepEqual(last.id, request.id);
      assert.equal(last.error?.data?.reason, 'request-abandoned');
      const stream = parseEventId(done.events[0]?.id as string).stream;
      const logged = await store.log.read(h.sessionId, stream, 0, 1_000_000);
      assert.deepEqual(
        done.events.map((e) => parseEventId(e.id as string).seq),
        logged.map((e) => e.seq),
        'the client saw exactly the log',
      );
      (replicas[0] as Replica).child.kill('SIGCONT');
      // The old owner wakes up with its tool still running and its lease gone. Once it
      // answers a request (its expired timers ran first), its writes have been tried.
      const probe = await send(a, { headers: sessionHeaders(h, { 'last-event-id': done.events[4]?.id as string }), timeoutMs: 5_000 });
      assert.equal(probe.status, 200, probe.text);
      const after = await store.log.read(h.sessionId, stream, 0, 1_000_000);
      assert.deepEqual(after, logged, 'nothing was appended to the abandoned stream after the takeover');
      assert.deepEqual(
        probe.events.map((e) => e.id),
        done.events.slice(5).map((e) => e.id),
        'the old owner serves the log, not its own events',
      );
      const direct = await send(a, { body: rpc('tools/call', { name: 'emit', arguments: { count: 2 } }), headers: sessionHeaders(h) });
      assert.equal(direct.status, 200, direct.text);
      assert.ok('result' in (messages(direct.events).at(-1) as object), 'the session goes on');
      const head = await store.log.head(h.sessionId, stream);
      assert.equal(head?.closed, true);
      assert.ok(taken.token > 1, 'the takeover raised the fencing token');
    } finally {
      (replicas[0] as Replica).child.kill('SIGCONT');
    }
  });

  test('replica swap: a replica stopped with SIGTERM releases its sessions, and the next request anywhere takes over', async () => {
    const h = await initialize((replicas[2] as Replica).url);
    const owner = (await store.ownership.current(h.sessionId))?.owner;
    assert.ok(owner);
    await (replicas[2] as Replica).kill('SIGTERM');
    await replace(2);
    assert.equal(await store.ownership.current(h.sessionId), undefined, 'the lease was released on the way out');
    const r = await send(proxy.url, { body: rpc('tools/call', { name: 'emit', arguments: { count: 2 } }), headers: sessionHeaders(h) });
    assert.equal(r.status, 200, r.text);
    assert.ok('result' in (messages(r.events).at(-1) as object));
    const lease = await store.ownership.current(h.sessionId);
    assert.ok(lease && lease.owner !== owner, 'another replica owns it');
  });

  test('Redis unreachable: 503 with Retry-After, then streams resume exactly and nothing accepted is lost', async () => {
    const [a, b] = replicas.map((r) => r.url) as [URL, URL];
    const h = await initialize(a);
    // Long enough to be cut by the outage, short enough to finish if its owner rides it out.
    const request = rpc('tools/call', { name: 'emit', arguments: { count: 2_000, intervalMs: 5 } });
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const first = send(b, { body: request, headers: sessionHeaders(h), timeoutMs: 30_000, cutWhen: (_e, all) => (all.length === 20 && started(), false) });
    await running;
    await redis.kill();
    const downAt = Date.now();
    const all: EventSourceMessage[] = [...(await within(first, 'the stream to end when Redis went away', 20_000)).events];
    const refused = await waitFor(async () => {
      const r = await send(proxy.url, { headers: sessionHeaders(h, { 'last-event-id': all.at(-1)?.id as string }) });
      return r.status === 503 ? r : undefined;
    }, 'a 503 while Redis is down');
    assert.equal(refused.headers['retry-after'], '1');
    assert.equal((refused.json() as { error: Reason }).error.data?.reason, 'store-unavailable');
    // The scenario: Redis stays unreachable for 2 s (a duration of the fault, not a wait for a condition).
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, 2_000 - (Date.now() - downAt))));
    await redis.restart();
    // Resume (each on the next replica) until the call's answer arrives.
    for (let round = 0; !messages(all).some((m) => m.id === request.id); round++) {
      assert.ok(round < 20, 'no final answer');
      const r = await waitFor(
        async () => {
          const x = await send(proxy.url, { headers: sessionHeaders(h, { 'last-event-id': all.at(-1)?.id as string }), timeoutMs: 20_000 });
          return x.status === 503 ? undefined : x; // replicas still reconnecting
        },
        'a resume once Redis is back',
        30_000,
      );
      assert.equal(r.status, 200, r.text);
      all.push(...r.events);
    }
    const seqs = all.map((e) => parseEventId(e.id as string).seq);
    assert.deepEqual(
      seqs,
      seqs.map((_, i) => i + 1),
      'contiguous, no duplicate',
    );
    const stream = parseEventId(all[0]?.id as string).stream;
    // The test's own store connection comes back on its own schedule, like the replicas'.
    const logged = await waitFor(
      async () => {
        try {
          return await store.log.read(h.sessionId, stream, 0, 1_000_000);
        } catch (error) {
          if (error instanceof ContinuityError && error.code === 'store-unavailable') return undefined;
          throw error;
        }
      },
      "the test's own store connection to be back",
      10_000,
    );
    assert.deepEqual(
      seqs,
      logged.map((e) => e.seq),
      'every logged event reached the client',
    );
    // The call ends explicitly: its owner either let go during the outage (a write failed:
    // request-abandoned from whoever took over) or rode it out (its writes retried once Redis
    // was back) and completed. Never silence, never a hole.
    const last = messages(all).at(-1) as { id?: unknown; error?: Reason; result?: { structuredContent?: unknown } };
    assert.equal(last.id, request.id);
    if (last.error) assert.equal(last.error.data?.reason, 'request-abandoned', 'the interrupted call ends explicitly');
    else assert.deepEqual(last.result?.structuredContent, { emitted: 2_000 });
  });

  test('Redis restarted without its data: 404, and our client re-initializes', async (t) => {
    // The test above restarted Redis: wait until every replica has its connection back.
    for (const r of replicas) {
      await waitFor(
        async () => (await send(r.url, { body: rpc('tools/list'), headers: { 'mcp-session-id': 'none-such-session-id-000' } })).status !== 503,
        'replica reconnected',
      );
    }
    // A replica whose connections (its bus subscriptions too) are still coming back answers a
    // retryable 503 (store-unavailable, Retry-After): the application connects again.
    const { transport, client } = await waitFor(async () => {
      const attempt = new ContinuityClientTransport(proxy.url, { reconnect: { initialDelayMs: 10, maxDelayMs: 100 } });
      const c = new Client({ name: 'lost', version: '1.0.0' });
      try {
        await c.connect(attempt);
        return { transport: attempt, client: c };
      } catch (error) {
        await c.close().catch(() => {});
        if (/Store unavailable|store-unavailable|owner-unavailable|does not answer/.test((error as Error).message)) return undefined;
        throw error;
      }
    }, 'a connection once every replica is back');
    t.after(() => client.close());
    const before = transport.sessionId as string;
    await client.callTool({ name: 'emit', arguments: { count: 2 } });
    // This server persists (for the test above); emptying it first makes the restart one
    // without data, as a Redis without persistence comes back.
    await redisCommand(redis.port, ['FLUSHALL']);
    await redis.restart();
    for (const r of replicas) {
      const response = await waitFor(async () => {
        const x = await send(r.url, { body: rpc('tools/list'), headers: { 'mcp-session-id': before } });
        return x.status === 503 ? undefined : x;
      }, 'replica reconnected');
      assert.equal(response.status, 404, `${r.url.href}: ${response.text}`);
    }
    // A replica whose connections are still coming back answers a retryable 503
    // (store-unavailable, Retry-After): the application tries again, as it would. A call
    // carried to the owner while the carrier's subscription was still away may end with
    // request-abandoned (it may have run): this tool may run twice, so it is tried again.
    const result = await waitFor(async () => {
      try {
        return await client.callTool({ name: 'emit', arguments: { count: 2 } });
      } catch (error) {
        if (/Store unavailable|store-unavailable|owner-unavailable|does not answer|request-abandoned|may have run/.test((error as Error).message))
          return undefined;
        throw error;
      }
    }, 'the call once every replica is back');
    assert.deepEqual(result.structuredContent, { emitted: 2 });
    assert.notEqual(transport.sessionId, before, 'a new session');
  });
});
