/**
 * Deploys: `serve` drains on SIGTERM. Three replicas on Redis restarted one by one while
 * calls stream: every call completes, with no event lost, duplicated or reordered, in the
 * same session. A single SQLite `serve` finishes its call in flight, then exits.
 *
 * The replicas are behind the test's round-robin proxy (each request to the next replica,
 * connection refusals retried on the next), which stands in for nginx here.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ContinuityClientTransport } from '../../src/client/index.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';
import { startReplica, type Replica } from '../helpers/replicas.js';
import { startRoundRobin, type RoundRobin } from '../helpers/round-robin.js';
import { tempFiles } from '../helpers/temp-files.js';
import { waitFor, within } from '../helpers/wait.js';

/** A 6 s call: 30 steps 200 ms apart, each a progress notification and a log message. */
const STEPS = 30;
const STEP_MS = 200;

interface Call {
  readonly progress: number[];
  readonly done: Promise<unknown>;
}

function longCall(client: Client): Call {
  const progress: number[] = [];
  const done = client.callTool({ name: 'emit', arguments: { count: STEPS, intervalMs: STEP_MS } }, undefined, {
    onprogress: (p) => progress.push(p.progress),
    timeout: 120_000,
  });
  return { progress, done };
}

function assertExact(call: Call, result: unknown, what: string): void {
  assert.deepEqual((result as { structuredContent?: unknown }).structuredContent, { emitted: STEPS }, `${what}: completed`);
  assert.deepEqual(
    call.progress,
    Array.from({ length: STEPS }, (_, i) => i + 1),
    `${what}: every event once, in order`,
  );
}

async function connect(url: URL): Promise<{ client: Client; transport: ContinuityClientTransport }> {
  const transport = new ContinuityClientTransport(url, { reconnect: { initialDelayMs: 20, maxDelayMs: 200 } });
  const client = new Client({ name: 'drain', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

describe('rolling restart with SIGTERM: three replicas on Redis', () => {
  let redis: RedisServer;
  const replicas: Replica[] = [];
  let proxy: RoundRobin;
  let spec: string;
  before(async () => {
    redis = await startRedis();
    spec = `${redis.url}?leaseMs=1000`;
    replicas.push(...(await Promise.all([0, 1, 2].map(() => startReplica(spec)))));
    proxy = await startRoundRobin(replicas.map((r) => r.url));
  });
  after(async () => {
    await proxy?.close();
    await Promise.all(replicas.map((r) => r.kill('SIGKILL')));
    await redis?.stop();
  });

  it('every call completes exactly, in the same session, while each replica is restarted in turn', { timeout: 180_000 }, async (t) => {
    // One session initialized on each replica, so each restart drains a session's owner.
    const clients: Array<{ client: Client; transport: ContinuityClientTransport }> = [];
    for (let i = 0; i < 3; i++) {
      proxy.rotateTo(i);
      clients.push(await connect(proxy.url));
    }
    t.after(() => Promise.all(clients.map((c) => c.client.close().catch(() => {}))));
    const sessions = clients.map((c) => c.transport.sessionId);
    for (let r = 0; r < 3; r++) {
      const calls = clients.map((c) => longCall(c.client));
      await waitFor(() => calls.every((c) => c.progress.length >= 3), `round ${r}: the calls to be under way`);
      const old = replicas[r] as Replica;
      const exited = new Promise<number | null>((resolve) => old.child.once('exit', (code) => resolve(code)));
      old.child.kill('SIGTERM');
      // The next replica comes up while the old one drains, as a rolling update does.
      replicas[r] = await startReplica(spec);
      proxy.setUpstreams(replicas.map((x) => x.url));
      const results = await within(Promise.all(calls.map((c) => c.done)), `round ${r}: the calls to complete`, 60_000);
      results.forEach((result, i) => assertExact(calls[i] as Call, result, `round ${r}, client ${i}`));
      assert.equal(await within(exited, `round ${r}: the drained replica to exit`, 30_000), 0, 'exited cleanly');
      assert.deepEqual(
        old.stderr.filter((l) => /abandon/i.test(l)),
        [],
        'nothing abandoned',
      );
    }
    assert.deepEqual(
      clients.map((c) => c.transport.sessionId),
      sessions,
      'the same sessions throughout',
    );
  });
});

describe('a single SQLite serve given SIGTERM mid-call', () => {
  const files = tempFiles('mcpc-drain-sqlite-');
  it('finishes the call, then exits', { timeout: 60_000 }, async (t) => {
    const replica = await startReplica(`sqlite:${files.path('drain')}`);
    t.after(() => replica.kill('SIGKILL'));
    const { client } = await connect(replica.url);
    t.after(() => client.close().catch(() => {}));
    const call = longCall(client);
    await waitFor(() => call.progress.length >= 3, 'the call to be under way');
    let exitedAt: number | undefined;
    const exited = new Promise<number | null>((resolve) =>
      replica.child.once('exit', (code) => {
        exitedAt = Date.now();
        resolve(code);
      }),
    );
    replica.child.kill('SIGTERM');
    const result = await within(call.done, 'the call to complete', 30_000);
    const completedAt = Date.now();
    assertExact(call, result, 'the call');
    assert.equal(await within(exited, 'the process to exit', 30_000), 0);
    assert.ok(exitedAt !== undefined && exitedAt >= completedAt - 50, 'it exited after the call completed');
  });
});
