/**
 * A rolling restart in small: a draining owner finishes the call it runs, takes no new call
 * for its session (503 `server-draining`, retried by the client), lets the session go as
 * soon as that call is answered, and exits well within its window; the client's next call
 * is taken over by the other replica: the same session, its lasting state kept, never a
 * 404. Real `serve` processes on a real Redis, our client calling back to back.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ContinuityClientTransport } from '../../src/client/index.js';
import { startRedis, type RedisServer } from '../helpers/redis.js';
import { startReplica, type Replica } from '../helpers/replicas.js';
import { startRoundRobin, type RoundRobin } from '../helpers/round-robin.js';
import { waitFor, within } from '../helpers/wait.js';
import { lastingProbe } from '../integration/lasting-probe.js';

const LEASE_MS = 1000;
const DRAIN_MS = 8000;
/** A 0.6 s call: 40 steps 15 ms apart. */
const STEPS = 40;
const STEP_MS = 15;

describe('a draining owner hands its session over (serve on Redis, two replicas)', () => {
  let redis: RedisServer;
  let spec: string;
  const replicas: Replica[] = [];
  let proxy: RoundRobin;
  before(async () => {
    redis = await startRedis();
    spec = `${redis.url}?leaseMs=${LEASE_MS}`;
    replicas.push(...(await Promise.all([0, 1].map(() => startReplica(spec, ['--drain-ms', String(DRAIN_MS)])))));
    proxy = await startRoundRobin(replicas.map((r) => r.url));
  });
  after(async () => {
    await proxy?.close();
    await Promise.all(replicas.map((r) => r.kill('SIGKILL')));
    await redis?.stop();
  });

  it(
    'calls back to back ride through the drain: none cut, the same session, its state kept, the owner gone long before its window',
    { timeout: 120_000 },
    async (t) => {
      const transport = new ContinuityClientTransport(proxy.url, { reconnect: { initialDelayMs: 20, maxDelayMs: 200 } });
      const client = new Client({ name: 'handover', version: '1.0.0' });
      const probe = lastingProbe(client);
      proxy.rotateTo(0);
      await client.connect(transport);
      t.after(() => client.close().catch(() => {}));
      const session = transport.sessionId;
      await probe.set();

      const owner = replicas[0] as Replica;
      let exitedAt: number | undefined;
      const exited = new Promise<number | null>((resolve) =>
        owner.child.once('exit', (code) => {
          exitedAt = Date.now();
          resolve(code);
        }),
      );
      let completed = 0;
      // Two callers back to back, overlapping: the session always has a call in flight, so
      // an owner that took new calls while draining would never let it go.
      const caller = async (name: string): Promise<number> => {
        let after = 0;
        let calls = 0;
        for (; after < 2; calls++) {
          const progress: number[] = [];
          const done = client.callTool({ name: 'emit', arguments: { count: STEPS, intervalMs: STEP_MS } }, undefined, {
            onprogress: (p) => progress.push(p.progress),
            timeout: 60_000,
          });
          const result = await within(done, `${name}, call ${calls}`, 30_000);
          assert.deepEqual((result as { structuredContent?: unknown }).structuredContent, { emitted: STEPS }, `${name}, call ${calls} completed`);
          assert.deepEqual(
            progress,
            Array.from({ length: STEPS }, (_, i) => i + 1),
            `${name}, call ${calls}: every event once, in order`,
          );
          completed++;
          if (exitedAt !== undefined) after++;
          assert.ok(calls < 200, `${name}: the owner exits`);
        }
        return calls;
      };
      const callers = Promise.all([caller('first'), caller('second')]);
      // A few calls run on the owner first, then it gets SIGTERM with calls in flight.
      await waitFor(() => completed >= 4, 'four calls to complete on the owner', 30_000);
      const signalledAt = Date.now();
      owner.child.kill('SIGTERM');
      await callers;
      assert.equal(await exited, 0, 'the owner exited cleanly');
      // The drain ends once its calls in flight are answered, not at its window: new calls were refused.
      assert.ok((exitedAt as number) - signalledAt < DRAIN_MS / 2, `the owner left in ${(exitedAt as number) - signalledAt} ms`);
      assert.equal(transport.sessionId, session, 'the same session');
      await probe.holds('after the handover');
      assert.deepEqual(
        owner.stderr.filter((l) => /abandon|not found/i.test(l)),
        [],
        'nothing abandoned',
      );
    },
  );
});
