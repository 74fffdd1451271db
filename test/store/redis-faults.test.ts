/**
 * The Redis store under faults, on private `redis-server` processes that the tests kill,
 * pause and restart: fail fast with a retryable `store-unavailable`, reconnect, and after a
 * restart without persistence find sessions gone entirely, never half-present. Also the
 * key layout (one hash tag per session) and whole-session expiry.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createClient } from '@redis/client';
import { chainSeed, nextChain } from '../../src/protocol/event-id.js';
import { isContinuityError } from '../../src/protocol/errors.js';
import { redisStore } from '../../src/store/redis/index.js';
import type { AppendNotice, LogEvent, SessionRecord, Store } from '../../src/store/types.js';
import { randomPrefix, redisCommand, redisOrSkip, startRedis, type RedisServer } from '../helpers/redis.js';
import { waitFor, within } from '../helpers/wait.js';

const available = await redisOrSkip('the Redis store fault tests');
const T0 = 1_700_000_000_000;

function record(id: string, patch: Partial<SessionRecord> = {}): SessionRecord {
  return { id, epoch: 'e1', pastEpochs: [], protocolVersion: '2025-11-25', initialize: '{}', createdAt: T0, lastActiveAt: T0, ...patch };
}

function events(from: number, count: number, chain: string): LogEvent[] {
  const out: LogEvent[] = [];
  for (let seq = from; seq < from + count; seq++) {
    const payload = `{"n":${seq}}`;
    chain = nextChain(chain, payload);
    out.push({ seq, chain, payload, at: T0 });
  }
  return out;
}

const unavailable = (err: unknown): boolean => isContinuityError(err, 'store-unavailable') && err.retryable;

/** Every key on a private server (they are few). */
async function allKeys(server: RedisServer): Promise<string[]> {
  const raw = await redisCommand(server.port, ['KEYS', '*']);
  return [...raw.matchAll(/\$\d+\r\n([^\r]*)\r\n/g)].map((m) => m[1] as string);
}

describe('redis store faults', { skip: !available }, () => {
  let server: RedisServer;
  const stores: Store[] = [];
  before(async () => {
    server = await startRedis();
  });
  after(async () => {
    for (const s of stores) await s.close();
    await server?.stop();
  });

  async function open(extra: Partial<Parameters<typeof redisStore>[0]> = {}): Promise<Store> {
    const store = await redisStore({
      url: server.url,
      keyPrefix: randomPrefix('faults'),
      commandTimeoutMs: 500,
      maxReconnectDelayMs: 200,
      ...extra,
    } as Parameters<typeof redisStore>[0]);
    stores.push(store);
    return store;
  }

  it('bad options are a TypeError or RangeError before any connection', async () => {
    const bad: Array<[unknown, ErrorConstructor]> = [
      [undefined, TypeError],
      [{}, TypeError],
      [{ url: server.url, cluster: { rootNodes: [{ url: server.url }] } }, TypeError],
      [{ url: 'http://127.0.0.1:6379' }, TypeError],
      [{ cluster: { rootNodes: [] } }, TypeError],
      [{ url: server.url, keyPrefix: 'a{b}' }, TypeError],
      [{ url: server.url, commandTimeoutMs: 0 }, RangeError],
      [{ url: server.url, sessionTtlMs: -1 }, RangeError],
      [{ url: server.url, retention: { maxEvents: 0 } }, RangeError],
    ];
    for (const [options, type] of bad) {
      await assert.rejects(redisStore(options as Parameters<typeof redisStore>[0]), type, JSON.stringify(options));
    }
  });

  it('refuses to start with store-unavailable when Redis cannot be reached', async () => {
    const dead = await startRedis();
    const url = dead.url;
    await dead.stop();
    await assert.rejects(within(redisStore({ url, connectTimeoutMs: 300 }), 'redisStore against a dead port'), (err: unknown) => {
      assert.ok(unavailable(err), String(err));
      assert.match((err as Error).message, new RegExp(`127\\.0\\.0\\.1:${new URL(url).port}`));
      return true;
    });
  });

  it('kill and restart without persistence: commands fail fast, then the session is gone entirely', async () => {
    const store = await open();
    await store.sessions.create(record('S'));
    const { token } = await store.ownership.acquire('S', 'A', 60_000);
    const seed = chainSeed('e1', 'st');
    await store.log.openStream('S', 'st', seed, { kind: 'request', requestIds: ['1'] }, token);
    const first = events(1, 3, seed);
    await store.log.append('S', 'st', first, token);

    await server.kill();
    // Fail fast: no offline queue, so each command is refused well before any deadlock bound.
    await within(assert.rejects(store.sessions.get('S'), unavailable), 'get while Redis is down', 5_000);
    await within(assert.rejects(store.log.append('S', 'st', events(4, 1, (first[2] as LogEvent).chain), token), unavailable), 'append while down', 5_000);
    await within(assert.rejects(store.ownership.renew('S', 'A', token, 60_000), unavailable), 'renew while down', 5_000);

    await server.restart();
    await waitFor(async () => {
      try {
        await store.sessions.count();
        return true;
      } catch (err) {
        if (unavailable(err)) return false;
        throw err;
      }
    }, 'the store to reconnect');
    assert.equal(await store.sessions.get('S'), undefined, 'record gone');
    assert.equal(await store.log.head('S', 'st'), undefined, 'log gone');
    assert.deepEqual(await store.log.streams('S'), []);
    assert.equal(await store.ownership.current('S'), undefined, 'lease gone');
    assert.equal(await store.ownership.renew('S', 'A', token, 60_000), false, 'the owner learns it lost the session');
    const next = events(4, 1, (first[2] as LogEvent).chain);
    await assert.rejects(store.log.append('S', 'st', next, token), (e: unknown) => isContinuityError(e, 'store-fenced'), 'fenced append');
    await assert.rejects(store.log.openStream('S', 'st', seed, { kind: 'request', requestIds: [] }, token), (e: unknown) =>
      isContinuityError(e, 'store-fenced'),
    );
    await assert.rejects(store.log.append('S', 'st', next), (e: unknown) => isContinuityError(e, 'store-conflict'), 'unfenced append');
    await store.sessions.put(record('S'), undefined);
    assert.equal(await store.sessions.get('S'), undefined, 'put does not resurrect it');
    assert.deepEqual(await allKeys(server), [], 'nothing half-present');
  });

  it('a paused Redis makes commands fail after the command timeout; they work again once it resumes', async () => {
    const store = await open();
    await store.sessions.create(record('P'));
    server.pause();
    try {
      await within(assert.rejects(store.sessions.get('P'), unavailable), 'get against a paused server', 5_000);
    } finally {
      server.resume();
    }
    await waitFor(async () => {
      try {
        return (await store.sessions.get('P'))?.id === 'P';
      } catch (err) {
        if (unavailable(err)) return false;
        throw err;
      }
    }, 'the paused server to answer again');
  });

  it('subscriptions survive a restart, and tailers are told to re-read', async () => {
    const store = await open();
    const bus = store.bus;
    assert.ok(bus);
    const got: AppendNotice[] = [];
    const unsubscribe = await bus.subscribeAppends('S', (n) => got.push(n));
    await server.restart();
    await waitFor(() => got.some((n) => n.resync === true), 'a resync notice after the reconnection');
    assert.deepEqual(
      got.find((n) => n.resync),
      { session: 'S', stream: '', lastSeq: -1, closed: false, resync: true },
    );
    await waitFor(async () => {
      try {
        await bus.publishAppend('S', 'st', 9);
      } catch (err) {
        if (!unavailable(err)) throw err;
      }
      return got.some((n) => n.lastSeq === 9);
    }, 'notices after the restart');
    await unsubscribe();
  });

  it("every key of a session carries its hash tag; an idle session's keys all expire together", async () => {
    const prefix = randomPrefix('ttl');
    const store = await open({ keyPrefix: prefix, sessionTtlMs: 400 });
    await store.sessions.create(record('X'));
    await store.ownership.acquire('X', 'A', 60_000);
    const seed = chainSeed('e1', 'a');
    await store.log.openStream('X', 'a', seed, { kind: 'request', requestIds: [] });
    await store.log.openStream('X', 'b', chainSeed('e1', 'b'), { kind: 'standalone', requestIds: [] });
    await store.log.append('X', 'a', events(1, 5, seed));
    const mine = (await allKeys(server)).filter((k) => k.startsWith(prefix));
    const tagged = mine.filter((k) => k.startsWith(`${prefix}{X}:`));
    // Beside the session: the idle index, and the registry of running replicas (their shared configuration).
    const index = mine.filter((k) => k === `${prefix}idle` || k === `${prefix}replicas`);
    assert.deepEqual(new Set(mine), new Set([...tagged, ...index]), "only the session's tagged keys, the index and the replica registry");
    assert.deepEqual(new Set(tagged.map((k) => k.slice(`${prefix}{X}:`.length))), new Set(['rec', 'lease', 'streams', 'h:a', 'e:a', 'h:b']));

    // Activity (puts) keeps the whole session alive past its TTL…
    const until = Date.now() + 1_000;
    while (Date.now() < until) {
      await store.sessions.put(record('X', { lastActiveAt: Date.now() }));
      assert.ok(await store.log.head('X', 'b'), 'an untouched stream lives as long as its session');
      await new Promise((r) => setTimeout(r, 50));
    }
    // …and once idle, it goes: never a record without its logs.
    await waitFor(async () => {
      // Heads first, then the record: if the record is still there, the heads (which expire
      // no earlier) must have been there a moment before.
      const heads = await Promise.all([store.log.head('X', 'a'), store.log.head('X', 'b')]);
      const rec = await store.sessions.get('X');
      if (rec) assert.ok(heads.every(Boolean), 'a record never outlives its logs');
      return rec === undefined;
    }, 'the idle session to expire');
    await waitFor(async () => (await allKeys(server)).filter((k) => k.startsWith(`${prefix}{X}:`)).length === 0, 'all its keys to expire');
    // The index still names it, so the idle sweep finds it and drops what is left.
    assert.deepEqual(await store.sessions.idleSince(Date.now() + 1, 10), ['X']);
  });

  it('two replicas (two connections): an owner that keeps writing after losing its lease never lands an event after the takeover', async () => {
    const keyPrefix = randomPrefix('replicas');
    const a = await open({ keyPrefix });
    const b = await open({ keyPrefix });
    const seed = chainSeed('e1', 'st');
    await a.sessions.create(record('R'));
    await a.log.openStream('R', 'st', seed, { kind: 'request', requestIds: [] });
    let owner: Store = a;
    let name = 'A';
    let other: Store = b;
    let otherName = 'B';
    for (let round = 0; round < 4; round++) {
      const lease = await owner.ownership.acquire('R', name, 40);
      assert.equal(lease.owner, name);
      // The owner writes as fast as it can and never renews: like a process that stalled
      // and then resumed, it does not know its lease lapsed.
      let refused: unknown;
      const writer = (async () => {
        for (;;) {
          const head = await owner.log.head('R', 'st');
          if (!head) throw new Error('no head');
          try {
            await owner.log.append('R', 'st', events(head.lastSeq + 1, 5, head.lastChain), lease.token);
          } catch (err) {
            refused = err;
            return;
          }
        }
      })();
      const taken = await waitFor(async () => {
        const l = await other.ownership.acquire('R', otherName, 60_000);
        return l.owner === otherName ? l : undefined;
      }, `${otherName} to take over`);
      assert.equal(taken.token, lease.token + 1);
      // The new owner continues from the head it reads now; the old one can never slip in between.
      const head = await other.log.head('R', 'st');
      assert.ok(head);
      await other.log.append('R', 'st', events(head.lastSeq + 1, 3, head.lastChain), taken.token);
      await within(writer, 'the old owner to be fenced off');
      assert.ok(isContinuityError(refused, 'store-fenced'), String(refused));
      await other.ownership.release('R', otherName, taken.token);
      [owner, other, name, otherName] = [other, owner, otherName, name];
    }
    const all = await a.log.read('R', 'st', 0, Number.MAX_SAFE_INTEGER);
    all.forEach((e, i) => assert.equal(e.seq, i + 1, 'contiguous'));
  });

  it('a client you pass in is used, and not closed by the store', async () => {
    const client = createClient({ url: server.url });
    client.on('error', () => {});
    await client.connect();
    try {
      const store = await redisStore({ client, keyPrefix: randomPrefix('client') });
      await store.sessions.create(record('C'));
      assert.equal((await store.sessions.get('C'))?.id, 'C');
      const got: AppendNotice[] = [];
      const unsubscribe = await store.bus?.subscribeAppends('C', (n) => got.push(n));
      await store.bus?.publishAppend('C', 's', 1);
      await waitFor(() => got.length === 1, 'a notice through the given client');
      await unsubscribe?.();
      await store.close();
      assert.equal(await client.ping(), 'PONG');
    } finally {
      await client.close();
    }
  });
});
