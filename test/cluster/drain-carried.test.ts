/**
 * A call for a draining owner's session, reaching another replica, is not refused there:
 * the owner takes none of it (it drains), lets the session go as soon as its call in
 * flight is answered, and the replica that got the call takes the session over and runs
 * it. A client that never retries (the SDK's transports do not retry a 503) sees its call
 * succeed in the same session. Real `serve` processes on a real Redis, raw HTTP.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { startRedis, type RedisServer } from '../helpers/redis.js';
import { startReplica, type Replica } from '../helpers/replicas.js';
import { initialize, messages, rpc, send, sessionHeaders } from '../helpers/sse-client.js';
import { waitFor, within } from '../helpers/wait.js';

const LEASE_MS = 2000;
/** A 1.2 s call: still running when the drain begins, answered well within a lease. */
const CALL = { count: 60, intervalMs: 20 };

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

describe('a call carried to a draining owner is run by the replica that got it', () => {
  let redis: RedisServer;
  const replicas: Replica[] = [];
  before(async () => {
    redis = await startRedis();
    const spec = `${redis.url}?leaseMs=${LEASE_MS}`;
    replicas.push(...(await Promise.all([0, 1].map(() => startReplica(spec, ['--drain-ms', '20000'])))));
  });
  after(async () => {
    await Promise.all(replicas.map((r) => r.kill('SIGKILL')));
    await redis?.stop();
  });

  it('waits for the owner to let the session go, takes it over and runs the call: no 503', { timeout: 60_000 }, async () => {
    const [owner, other] = replicas as [Replica, Replica];
    const h = await initialize(owner.url);
    const headers = sessionHeaders(h, { accept: 'application/json, text/event-stream' });
    let running = true;
    let accepted = false;
    const long = send(owner.url, { headers, body: rpc('tools/call', { name: 'emit', arguments: CALL }), onResponse: () => (accepted = true) }).finally(
      () => (running = false),
    );
    await waitFor(() => accepted, 'the owner to accept the long call');
    owner.child.kill('SIGTERM');
    await waitFor(() => refused(Number(owner.url.port)), 'the owner draining (it refuses new connections)');
    assert.ok(running, 'the call on the owner still runs when the next one is sent');

    const next = await within(
      send(other.url, { headers, body: rpc('tools/call', { name: 'emit', arguments: { count: 2, intervalMs: 0 } }) }),
      'the call sent to the other replica',
      15_000,
    );
    assert.equal(next.status, 200, `the call sent during the drain: ${next.status} ${JSON.stringify(messages(next.events)).slice(0, 300)}`);
    const answer = messages(next.events).find((m) => 'result' in m || 'error' in m);
    assert.deepEqual((answer?.result as { structuredContent?: unknown } | undefined)?.structuredContent, { emitted: 2 }, 'the call ran once, there');
    const first = await within(long, 'the call running at SIGTERM', 15_000);
    assert.equal(first.status, 200);
    assert.ok(
      messages(first.events).some((m) => 'result' in m),
      'the call running at SIGTERM was answered',
    );
  });
});
