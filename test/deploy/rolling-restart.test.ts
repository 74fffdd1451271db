/**
 * A rolling restart behind real nginx (docs/deploy.md's recipe, as written) on Redis: each
 * of three `serve` replicas in turn is given SIGTERM while a 6 s call streams in every
 * session, and is replaced either in place or by a new replica nginx is reloaded with.
 * The draining replica refuses new work with a retryable 503 while it finishes its calls.
 * Every call completes, with no event lost, duplicated or reordered, in the same session.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ContinuityClientTransport } from '../../src/client/index.js';
import { nginxOrSkip, recipe } from '../helpers/nginx.js';
import { freePort } from '../helpers/processes.js';
import { startReplica, type Replica } from '../helpers/replicas.js';
import { startNginxCluster, stopNginxCluster, type NginxCluster } from '../helpers/nginx-cluster.js';
import { waitFor, within } from '../helpers/wait.js';

const DOCS = readFileSync(fileURLToPath(new URL('../../docs/deploy.md', import.meta.url)), 'utf8');

/** A 6 s call: 30 steps 200 ms apart, each a progress notification and a log message. */
const STEPS = 30;
const STEP_MS = 200;
const ROUNDS = 3;

interface Call {
  readonly progress: number[];
  readonly done: Promise<unknown>;
}

interface Session {
  readonly client: Client;
  readonly transport: ContinuityClientTransport;
}

function longCall(client: Client): Call {
  const progress: number[] = [];
  const done = client.callTool({ name: 'emit', arguments: { count: STEPS, intervalMs: STEP_MS } }, undefined, {
    onprogress: (p) => progress.push(p.progress),
    timeout: 120_000,
  });
  return { progress, done };
}

/** The recipe with its three example upstreams replaced by `ports` on loopback. */
function nginxConf(ports: readonly number[]): string {
  const conf = recipe(DOCS, '## nginx', 'nginx');
  let i = 0;
  const out = conf.replace(/server 10\.0\.0\.1\d:3000/g, () => `server 127.0.0.1:${ports[i++]}`);
  assert.equal(i, 3, 'the recipe names three replicas');
  return out;
}

describe('rolling restart behind nginx: three replicas on Redis, SIGTERM one by one', () => {
  let cluster: NginxCluster | undefined;
  before(async () => {
    if (nginxOrSkip('the rolling restart behind nginx')) cluster = await startNginxCluster(nginxConf);
  });
  after(() => stopNginxCluster(cluster));

  /**
   * `in place`: the replica comes back on its own address once it has exited (systemd, or a
   * fixed upstream list); meanwhile its port refuses and nginx passes requests on.
   * `reload`: the next replica starts on a new address while the old one drains, and nginx
   * is reloaded with it in the old one's place (what a Kubernetes ingress does as a pod
   * terminates); the old workers keep the streams they hold until the drained replica exits.
   */
  for (const mode of ['in place', 'reload'] as const)
    it(`${mode}: every call completes exactly, in the same session, while each replica is restarted in turn`, { timeout: 240_000 }, async (t) => {
      if (!cluster) return t.skip('nginx missing');
      const { nginx, store, replicas, ports, spec, args } = cluster;
      // Sessions until each replica owns one, so every restart drains a session's owner.
      // nginx places requests round robin and a connect is three of them (initialize,
      // initialized, the standalone GET): one refused request in between moves the next
      // initialize to the next replica.
      const sessions: Session[] = [];
      t.after(() => Promise.all(sessions.map((s) => s.client.close().catch(() => {}))));
      const owners = new Set<string>();
      while (owners.size < 3) {
        assert.ok(sessions.length < 12, `nginx placed 12 sessions on only ${owners.size} replicas`);
        if (sessions.length > 0) assert.equal((await fetch(nginx.url('/mcp'))).status, 400, 'a GET without a session is refused');
        const transport = new ContinuityClientTransport(nginx.url('/mcp'), { reconnect: { initialDelayMs: 20, maxDelayMs: 200 } });
        const client = new Client({ name: `rolling-${sessions.length}`, version: '1.0.0' });
        await client.connect(transport);
        sessions.push({ client, transport });
        const owner = (await store.ownership.current(transport.sessionId as string))?.owner;
        assert.ok(owner !== undefined, 'the session has an owner');
        owners.add(owner);
      }
      const ids = sessions.map((s) => s.transport.sessionId);
      const reported: string[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        const calls = sessions.map((s) => longCall(s.client));
        await waitFor(() => calls.every((c) => c.progress.length >= 3), `round ${r}: the calls to be under way`);
        const old = replicas[r] as Replica;
        const exited = new Promise<number | null>((resolve) => old.child.once('exit', (code) => resolve(code)));
        old.child.kill('SIGTERM');
        if (mode === 'reload') {
          const port = await freePort();
          replicas[r] = await startReplica(spec, args(port));
          ports[r] = port;
          await nginx.reload(nginxConf(ports));
        }
        const results = await within(Promise.all(calls.map((c) => c.done)), `round ${r}: the calls to complete`, 90_000);
        results.forEach((result, i) => {
          const call = calls[i] as Call;
          assert.deepEqual((result as { structuredContent?: unknown }).structuredContent, { emitted: STEPS }, `round ${r}, session ${i}: completed`);
          assert.deepEqual(
            call.progress,
            Array.from({ length: STEPS }, (_, k) => k + 1),
            `round ${r}, session ${i}: every event once, in order`,
          );
        });
        assert.equal(await within(exited, `round ${r}: the drained replica to exit`, 60_000), 0, 'exited cleanly');
        assert.deepEqual(
          old.stderr.filter((l) => /abandon/i.test(l)),
          [],
          'nothing abandoned',
        );
        reported.push(...old.stderr.filter((l) => /error/i.test(l)));
        // Back on the same address: nginx's upstream list does not change.
        if (mode === 'in place') replicas[r] = await startReplica(spec, args(ports[r] as number));
      }
      assert.deepEqual(
        sessions.map((s) => s.transport.sessionId),
        ids,
        'the same sessions throughout',
      );
      // Every session still answers through nginx after the last restart.
      for (const s of sessions) assert.deepEqual((await s.client.callTool({ name: 'emit', arguments: { count: 1 } })).structuredContent, { emitted: 1 });
      t.diagnostic(
        `${mode}: ${sessions.length} sessions, ${ROUNDS} rounds, ${sessions.length * ROUNDS} calls of ${STEPS} events; nginx error log:\n${nginx.errorLog()}`,
      );
      assert.deepEqual(reported, [], 'the drained replicas reported no errors');
    });
});
