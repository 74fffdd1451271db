/**
 * The SSE→WebSocket upgrade cut at each phase, through the chaos proxy: inside the
 * `upgrade-accepted` event, before the 101, inside the 101 head, and inside the frames of
 * a call answered over the socket. A call in flight may fail — with a typed error, never
 * a hole in what it delivered — and the client must then work on a new session: the next
 * call delivers everything exactly once.
 */
import { prng } from '../../helpers/prng.js';
import { waitFor } from '../../helpers/wait.js';
import { checkHistory, isZero } from './check.js';
import { connectConsumer } from './client.js';
import { Proxy, startServer, type ServerProcess } from './servers.js';
import type { Family, RunResult, Scenario, StoreFactory } from './types.js';
import type { ConnectionPlan } from '../../../src/chaos/proxy.js';

export const UPGRADE_PHASES = ['inside-offer', 'before-101', 'inside-101', 'mid-frame'] as const;
const FIRST = 60;
const SECOND = 24;

function plan(phase: (typeof UPGRADE_PHASES)[number], mode: 'fin' | 'rst', rand: () => number): ConnectionPlan {
  switch (phase) {
    case 'inside-offer':
      return { after: 'upgrade-accepted', cutAfterBytes: 1 + Math.floor(rand() * 40), mode };
    case 'before-101':
      return { after: 'HTTP/1.1 101', cutAfterBytes: 0, mode };
    case 'inside-101':
      return { after: 'HTTP/1.1 101', cutAfterBytes: 1 + Math.floor(rand() * 40), mode };
    case 'mid-frame':
      return { after: 'HTTP/1.1 101', cutAfterBytes: 300 + Math.floor(rand() * 3000), mode };
  }
}

export function upgradeFamily(store: StoreFactory): Family {
  let server: ServerProcess | undefined;
  let proxy: Proxy | undefined;
  let cleanup: () => Promise<void> = () => Promise.resolve();
  return {
    name: `upgrade/${store.name}`,
    async setup() {
      const created = await store.create();
      cleanup = created.cleanup;
      server = await startServer({ store: created.spec, retryMs: 5, hostGuard: false, websocket: true });
      proxy = await Proxy.start(server.url);
      const p = proxy;
      const scenarios: Scenario[] = [];
      for (const mode of ['fin', 'rst'] as const) {
        for (const phase of UPGRADE_PHASES) {
          scenarios.push({
            name: `upgrade/${store.name}/${mode}/${phase}`,
            async run(seed): Promise<RunResult> {
              const rand = prng(seed);
              const before = p.cuts;
              p.armOnce(plan(phase, mode, rand));
              const c = await connectConsumer(p.url, { upgrade: { websocket: true } });
              try {
                const run = `u${seed.toString(36)}`;
                const first = await c.produce(run, FIRST);
                const counts = checkHistory(FIRST, c.delivered, first.ok);
                // However the fault ended, the client is on a working session now.
                await waitFor(() => p.cuts > before || c.transport.upgraded, 'the cut or the upgrade', 10_000);
                const second = await c.produce(`${run}b`, SECOND);
                const after = checkHistory(SECOND, c.delivered, second.ok);
                counts.lost += after.lost;
                counts.duplicated += after.duplicated;
                counts.reordered += after.reordered;
                counts.unexpected += after.unexpected + c.strays;
                let failure: string | undefined;
                if (!first.ok && !/^[a-z-]+$/.test(first.code)) failure = `the call in flight failed untyped: ${first.code}`;
                else if (!second.ok) failure = `the next call failed: ${second.code}`;
                else if (!isZero(counts)) failure = `delivered ${c.delivered.join(',')}`;
                return { counts, outcome: first.code, landed: p.cuts > before, failure };
              } finally {
                p.disarm();
                await c.close().catch(() => {});
              }
            },
          });
        }
      }
      return scenarios;
    },
    async teardown() {
      await proxy?.close().catch(() => {});
      await server?.kill();
      await cleanup();
    },
  };
}
