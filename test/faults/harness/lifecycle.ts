/**
 * The log and the process going away under a reader.
 *
 * - kill: kill -9 the server mid-stream and restart it on the same port. On a durable
 *   store the session survives: the call fails fast with `request-abandoned` (it can never
 *   complete) and what was delivered is a gap-free prefix; on the memory store the session
 *   is gone, and the failure is typed. Either way the client works afterwards.
 * - trim: a cut, then the log trims past the reader's cursor before it resumes: the resume
 *   is refused (`replay-window-exceeded`), never answered with a gap.
 */
import { prng } from '../../helpers/prng.js';
import { freePort } from '../../helpers/processes.js';
import { waitFor } from '../../helpers/wait.js';
import { marker } from '../produce.js';
import { checkHistory } from './check.js';
import { connectConsumer, type Consumer } from './client.js';
import { Proxy, startServer, type ServerProcess } from './servers.js';
import type { Family, RunResult, StoreFactory } from './types.js';

const KILL_EVENTS = 400;

export function killFamily(store: StoreFactory): Family {
  let server: ServerProcess | undefined;
  let consumer: Consumer | undefined;
  let cleanup: () => Promise<void> = () => Promise.resolve();
  return {
    name: `kill/${store.name}`,
    async setup() {
      const created = await store.create();
      cleanup = created.cleanup;
      const port = await freePort();
      const spec = { store: created.spec, retryMs: 20, port };
      server = await startServer(spec);
      consumer = await connectConsumer(server.url, { reconnect: { initialDelayMs: 20, maxDelayMs: 150, maxRequestAttempts: 400 } });
      const c = consumer;
      return [
        {
          name: `kill/${store.name}/mid-stream`,
          async run(seed): Promise<RunResult> {
            const run = `k${seed.toString(36)}`;
            const at = 3 + Math.floor(prng(seed)() * 100);
            const call = c.produce(run, KILL_EVENTS, { intervalMs: 1 });
            await Promise.race([waitFor(() => c.delivered.length >= at, `${at} events delivered`, 20_000), call]);
            const landed = c.delivered.length < KILL_EVENTS;
            await server?.kill();
            server = await startServer(spec);
            const outcome = await call;
            const counts = checkHistory(KILL_EVENTS, c.delivered, outcome.ok);
            counts.unexpected += c.strays;
            c.strays = 0;
            let failure: string | undefined;
            if (store.durable && !outcome.ok && outcome.code !== 'request-abandoned') failure = `expected request-abandoned, got ${outcome.code}`;
            try {
              await c.client.ping({ timeout: 20_000 });
            } catch (error) {
              failure ??= `the client does not work after the restart: ${(error as Error).message}`;
            }
            return { counts, outcome: outcome.code, landed, failure };
          },
        },
      ];
    },
    async teardown() {
      await consumer?.close().catch(() => {});
      await server?.kill();
      await cleanup();
    },
  };
}

const TRIM_RETAINED = 20;
const TRIM_EVENTS = 120;

export function trimFamily(store: StoreFactory): Family {
  let server: ServerProcess | undefined;
  let proxy: Proxy | undefined;
  let consumer: Consumer | undefined;
  let cleanup: () => Promise<void> = () => Promise.resolve();
  return {
    name: `trim/${store.name}`,
    async setup() {
      const created = await store.create();
      cleanup = created.cleanup;
      server = await startServer({ store: created.spec, retryMs: 30, hostGuard: false, retention: { maxEvents: TRIM_RETAINED } });
      proxy = await Proxy.start(server.url);
      // Every run provokes a refusal back to back, on purpose: not the flapping server the
      // divergence limit protects against, so the limit is lifted for this consumer.
      consumer = await connectConsumer(proxy.url, { reconnect: { initialDelayMs: 5, maxDelayMs: 100, maxDivergences: 1_000_000 } });
      const p = proxy;
      const c = consumer;
      return [
        {
          name: `trim/${store.name}/cursor-trimmed-before-resume`,
          async run(seed): Promise<RunResult> {
            const run = `t${seed.toString(36)}`;
            const k = 2 + Math.floor(prng(seed)() * 5);
            const before = p.cuts;
            p.armOnce({ after: marker(run, k), cutAfterBytes: 0, mode: 'fin' });
            const outcome = await c.produce(run, TRIM_EVENTS);
            p.disarm();
            const counts = checkHistory(TRIM_EVENTS, c.delivered, outcome.ok);
            counts.unexpected += c.strays;
            c.strays = 0;
            const failure = outcome.ok || outcome.code === 'replay-window-exceeded' ? undefined : `expected replay-window-exceeded, got ${outcome.code}`;
            return { counts, outcome: outcome.code, landed: p.cuts > before, failure };
          },
        },
      ];
    },
    async teardown() {
      await consumer?.close().catch(() => {});
      await proxy?.close().catch(() => {});
      await server?.kill();
      await cleanup();
    },
  };
}
