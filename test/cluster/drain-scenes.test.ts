/**
 * The drain and the takeover in one process: a drain's outcome is reported as it went, a call
 * sent to a draining owner is refused before it runs (a new connection refused; on one kept
 * alive from before, 503 `server-draining`, retryable), a
 * request a draining replica is placing when its window ends is answered, never cut, and a
 * request that meets a takeover in progress is answered within one lease.
 */
import { describe, it } from 'node:test';
import { Agent, request } from 'node:http';
import assert from 'node:assert/strict';
import type { DrainEvent } from '../../src/telemetry/events.js';
import { memoryStore } from '../../src/store/memory/index.js';
import type { Store } from '../../src/store/types.js';
import { STANDALONE_STREAM } from '../../src/server/stream/names.js';
import { createExampleServer } from '../../src/example/index.js';
import type { SessionContext } from '../../src/server/session/context.js';
import { startFixture } from '../helpers/fixture.js';
import { initialize, rpc, send, sessionHeaders, type Handshake, type RawResponse } from '../helpers/sse-client.js';
import { waitFor, within } from '../helpers/wait.js';

/** Refusals a client may retry because the request was not accepted (what our client retries). */
const NOT_ACCEPTED = ['server-draining', 'owner-unavailable', 'endpoint-closed'];

type Answer = Pick<RawResponse, 'status' | 'headers' | 'text'>;

/**
 * Sends on `agent`'s kept-alive connection: a draining listener refuses new connections,
 * so a request reaches it only on a connection opened before its drain.
 */
function onKept(agent: Agent, url: URL, headers: Record<string, string>, body?: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const all = { ...headers, accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
    const req = request(url, { method: body === undefined ? 'GET' : 'POST', agent, headers: all }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString())).on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

function assertNotAccepted(response: Answer, what: string): void {
  assert.equal(response.status, 503, `${what}: 503 (${response.text})`);
  assert.ok(response.headers['retry-after'] !== undefined, `${what}: Retry-After`);
  const reason = (JSON.parse(response.text) as { error: { data: { reason?: string } } }).error.data.reason;
  assert.ok(NOT_ACCEPTED.includes(reason as string), `${what}: a not-accepted reason, got ${reason}`);
}

/** A call of `count` progress steps `intervalMs` apart; `running` settles at its first step. */
function longCall(url: URL, h: Handshake, count: number, intervalMs: number): { running: Promise<void>; done: Promise<RawResponse | undefined> } {
  let started: () => void = () => {};
  const running = new Promise<void>((resolve) => (started = resolve));
  const done = send(url, {
    body: rpc('tools/call', { name: 'emit', arguments: { count, intervalMs }, _meta: { progressToken: 'p' } }),
    headers: sessionHeaders(h),
    cutWhen: (event) => {
      if (event.data.includes('notifications/progress')) started();
      return false;
    },
  }).catch(() => undefined);
  return { running, done };
}

const quickCall = () => rpc('tools/call', { name: 'emit', arguments: { count: 1, intervalMs: 0 } });

describe('the drain says what it did', () => {
  it('a call cut at the end of the window: abandoned; a call sent meanwhile is refused before it runs', async () => {
    const drains: DrainEvent[] = [];
    const f = await startFixture({ onDrain: (e) => drains.push(e) });
    const h = await initialize(f.url);
    const long = longCall(f.url, h, 200, 20);
    await long.running;
    const kept = new Agent({ keepAlive: true, maxSockets: 1 });
    await onKept(kept, new URL('/elsewhere', f.url), {});
    const closed = f.listener.close({ drainMs: 400 });
    assert.equal(f.endpoint.draining, true);
    await assert.rejects(send(f.url, { body: quickCall(), headers: sessionHeaders(h) }), { code: 'ECONNREFUSED' }, 'a new connection is refused');
    assertNotAccepted(await onKept(kept, f.url, sessionHeaders(h), quickCall()), 'a new call to the draining owner');
    kept.destroy();
    await closed;
    await long.done;
    assert.deepEqual(
      drains.map((e) => [e.outcome, e.sessions]),
      [['abandoned', 1]],
    );
  });

  it('calls that finish within the window: completed', async () => {
    const drains: DrainEvent[] = [];
    const f = await startFixture({ onDrain: (e) => drains.push(e) });
    const h = await initialize(f.url);
    const long = longCall(f.url, h, 10, 20);
    await long.running;
    await f.listener.close({ drainMs: 30_000 });
    const answered = await long.done;
    assert.ok(
      answered?.events.some((e) => e.data.includes('"result"')),
      'the call was answered',
    );
    assert.deepEqual(
      drains.map((e) => [e.outcome, e.sessions]),
      [['completed', 1]],
    );
  });
});

describe('a request a draining replica is placing when its window ends (in-process cluster)', () => {
  it('is answered with a retryable refusal at the end of the window, not cut, although the silent owner holds the session longer', async () => {
    const store: Store = memoryStore();
    const leaseMs = 1000;
    const cluster = (id: string) => ({ store, cluster: { enabled: true, leaseMs, replicaId: id } });
    const first = await startFixture(cluster('r0'));
    const h = await initialize(first.url);
    await first.close();
    // A silent owner: its lease is live for 3 s, it listens to nothing, so nothing carried reaches it.
    const ghost = await store.ownership.acquire(h.sessionId, 'ghost', 3000);
    assert.equal(ghost.owner, 'ghost');
    // Counts the looks at the lease: a request that found the owner silent waits, looking, for it to lapse.
    const current = store.ownership.current.bind(store.ownership);
    let looks = 0;
    store.ownership.current = (session) => {
      if (session === h.sessionId) looks++;
      return current(session);
    };
    const draining = await startFixture(cluster('r1'));
    // A call of its own in flight keeps the draining replica's drain going for its whole window.
    const own = longCall(draining.url, await initialize(draining.url), 200, 20);
    await own.running;
    const answer = send(draining.url, { body: quickCall(), headers: sessionHeaders(h) });
    await waitFor(() => looks >= 1, 'the request to wait for the silent owner');
    const started = Date.now();
    const closed = draining.listener.close({ drainMs: 300 });
    assertNotAccepted(await within(answer, 'the answer', 10_000), 'the request being placed');
    const ms = Date.now() - started;
    // Answered at the end of the window (300 ms), not when the owner's lease lapses (3 s):
    // a second of margin for a loaded machine, still well under the lease.
    assert.ok(ms < 300 + 1000, `answered after ${ms} ms`);
    await closed;
    await own.done;
  });
});

describe('a request that meets a takeover in progress (in-process cluster)', () => {
  it('is answered within one lease: refused retryably while the new owner rebuilds the session, served once it has', async (t) => {
    const store: Store = memoryStore();
    const leaseMs = 1000;
    const cluster = (id: string) => ({ store, cluster: { enabled: true, leaseMs, replicaId: id } });
    // An application whose rebuild takes as long as the test says (say, state loaded from a database).
    let reached: () => void = () => {};
    const rebuilding = new Promise<void>((resolve) => (reached = resolve));
    let open: () => void = () => {};
    const gate = new Promise<void>((resolve) => (open = resolve));
    const server = async (context: SessionContext) => {
      if (context.rehydrating) {
        reached();
        await gate;
      }
      return createExampleServer();
    };
    const first = await startFixture(cluster('r0'));
    const h = await initialize(first.url);
    await first.close();
    const taker = await startFixture({ ...cluster('r1'), server });
    const other = await startFixture({ ...cluster('r2'), server });
    t.after(() => Promise.all([taker.close(), other.close()]));
    const taking = send(taker.url, { body: quickCall(), headers: sessionHeaders(h) });
    await rebuilding;
    const started = Date.now();
    const met = await send(other.url, { body: quickCall(), headers: sessionHeaders(h) });
    const ms = Date.now() - started;
    assert.ok(ms < leaseMs, `answered after ${ms} ms`);
    assertNotAccepted(met, 'a request carried to the owner while it rebuilds the session');
    open();
    const taken = await taking;
    assert.equal(taken.status, 200);
    assert.ok(
      taken.events.some((e) => e.data.includes('"result"')),
      'the taker served its call',
    );
    const next = await send(other.url, { body: quickCall(), headers: sessionHeaders(h) });
    assert.ok(
      next.events.some((e) => e.data.includes('"result"')),
      'then the other replica has its calls served by the new owner',
    );
  });
});

describe('a call being admitted when the drain lets its session go (in-process cluster)', () => {
  for (const via of ['the owner', 'another replica'] as const) {
    it(`reached through ${via}: never 404; refused retryably or served by the next owner, and the session lives on`, async (t) => {
      const store: Store = memoryStore();
      const cluster = (id: string) => ({ store, cluster: { enabled: true, leaseMs: 1000, replicaId: id } });
      const owner = await startFixture(cluster('r0'));
      const other = await startFixture(cluster('r1'));
      t.after(() => Promise.all([owner.close(), other.close()]));
      const h = await initialize(owner.url);
      // The call's stream is being opened in the store (a round trip on Redis) when the drain
      // looks: the session has no call counted yet, so the drain lets it go.
      let reached: () => void = () => {};
      const opening = new Promise<void>((resolve) => (reached = resolve));
      let open: () => void = () => {};
      const gate = new Promise<void>((resolve) => (open = resolve));
      const openStream = store.log.openStream.bind(store.log);
      let armed = true;
      store.log.openStream = async (session, name, ...rest) => {
        if (armed && session === h.sessionId && name !== STANDALONE_STREAM) {
          armed = false;
          reached();
          await gate;
        }
        return openStream(session, name, ...rest);
      };
      const answer = send(via === 'the owner' ? owner.url : other.url, { body: quickCall(), headers: sessionHeaders(h) });
      await opening;
      const closed = owner.listener.close({ drainMs: 10_000 });
      await waitFor(() => owner.endpoint.sessionCount === 0, 'the drain to let the session go');
      open();
      const got = await answer;
      if (got.status !== 200) assertNotAccepted(got, 'the call');
      else
        assert.ok(
          got.events.some((e) => e.data.includes('"result"')),
          'served by the next owner',
        );
      await closed;
      const next = await send(other.url, { body: quickCall(), headers: sessionHeaders(h) });
      assert.ok(
        next.events.some((e) => e.data.includes('"result"')),
        `the session lives on (${next.status} ${next.text})`,
      );
    });
  }
});
