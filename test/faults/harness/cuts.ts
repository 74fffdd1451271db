/**
 * Cuts: our client, through the chaos proxy, reads a `produce` stream that is cut once at
 * a chosen byte — inside a data field, inside a multi-byte UTF-8 character, between the
 * two line feeds that end an event, exactly between events, inside the next `id:` field,
 * or anywhere — by FIN, RST or a stall (ended by destroying every connection). Every
 * event must reach the application exactly once, in order, with no divergence reported.
 */
import { prng } from '../../helpers/prng.js';
import { initialize, rpc, send, sessionHeaders } from '../../helpers/sse-client.js';
import { waitFor } from '../../helpers/wait.js';
import { AFTER_MARKER, marker } from '../produce.js';
import { checkHistory, isZero } from './check.js';
import { connectConsumer, type Consumer } from './client.js';
import { Proxy, startServer, type ServerProcess } from './servers.js';
import type { Family, RunResult, Scenario, StoreFactory } from './types.js';

export const CUT_POINTS = ['mid-field', 'mid-utf8', 'mid-terminator', 'between-events', 'mid-id', 'random'] as const;
export type CutPoint = (typeof CUT_POINTS)[number];
export const CUT_STYLES = ['fin', 'rst', 'stall'] as const;
export type CutStyle = (typeof CUT_STYLES)[number];

const EVENTS = 24;
const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

/** Bytes from the end of an event's marker to the end of its blank line (the same for every event). */
async function calibrate(url: URL): Promise<number> {
  const h = await initialize(url);
  const run = 'calibrate';
  const response = await send(url, { body: rpc('tools/call', { name: 'produce', arguments: { run, count: 3 } }), headers: sessionHeaders(h) });
  const m = marker(run, 2);
  const end = response.text.indexOf(m) + m.length;
  const blank = response.text.indexOf('\n\n', end);
  if (end < m.length || blank < 0) throw new Error('calibration: marker or blank line not found');
  return bytes(response.text.slice(end, blank + 2));
}

/** Offset of the cut, counted in bytes from the start of event `k`'s marker. */
function offset(point: CutPoint, run: string, k: number, tail: number, rand: () => number): number {
  const m = bytes(marker(run, k));
  const end = m + tail;
  switch (point) {
    case 'mid-field':
      return 1 + Math.floor(rand() * (m - 1));
    case 'mid-utf8': {
      // 𝄞 (4 bytes), € (3), é (2): every offset strictly inside one of them.
      const inside = [1, 2, 3, 5, 6, 8];
      return m + (inside[Math.floor(rand() * inside.length)] as number);
    }
    case 'mid-terminator':
      return end - 1;
    case 'between-events':
      return end;
    case 'mid-id':
      return end + 1 + Math.floor(rand() * 20);
    case 'random':
      return Math.floor(rand() * 1500);
  }
}

export function cutFamily(store: StoreFactory, styles: readonly CutStyle[] = CUT_STYLES): Family {
  let server: ServerProcess | undefined;
  let proxy: Proxy | undefined;
  let consumer: Consumer | undefined;
  let cleanup: () => Promise<void> = () => Promise.resolve();
  return {
    name: `cut/${store.name}`,
    async setup() {
      const created = await store.create();
      cleanup = created.cleanup;
      server = await startServer({ store: created.spec, retryMs: 5, hostGuard: false });
      const tail = await calibrate(server.url);
      if (tail < bytes(AFTER_MARKER) + 3) throw new Error(`calibration: tail of ${tail} bytes is too short`);
      proxy = await Proxy.start(server.url);
      consumer = await connectConsumer(proxy.url);
      const p = proxy;
      const c = consumer;
      const scenarios: Scenario[] = [];
      for (const style of styles) {
        for (const point of CUT_POINTS) {
          scenarios.push({
            name: `cut/${store.name}/${style}/${point}`,
            async run(seed): Promise<RunResult> {
              const rand = prng(seed);
              const run = `r${seed.toString(36)}`;
              const k = 2 + Math.floor(rand() * (EVENTS - 3));
              const at = offset(point, run, k, tail, rand);
              const before = p.cuts;
              const reportsBefore = c.reports.length;
              p.armOnce({ after: marker(run, k), cutAfterBytes: at, mode: style });
              const call = c.produce(run, EVENTS);
              if (style === 'stall') {
                // A stall never ends by itself: once it has landed, destroy every connection.
                const landed = await Promise.race([waitFor(() => p.cuts > before, 'the stall', 10_000).then(() => true), call.then(() => false)]);
                if (landed) await p.restart();
              }
              const outcome = await call;
              p.disarm();
              const counts = checkHistory(EVENTS, c.delivered, outcome.ok);
              counts.unexpected += c.strays;
              c.strays = 0;
              const alarms = c.reports.slice(reportsBefore).map((r) => r.code);
              let failure: string | undefined;
              if (!outcome.ok) failure = `the call failed: ${outcome.code}`;
              else if (alarms.length > 0) failure = `false alarm: ${alarms.join(',')}`;
              else if (!isZero(counts)) failure = `delivered ${c.delivered.join(',')}`;
              return { counts, outcome: outcome.code, landed: p.cuts > before, failure };
            },
          });
        }
      }
      return scenarios;
    },
    async teardown() {
      await consumer?.close().catch(() => {});
      await proxy?.close().catch(() => {});
      await server?.kill();
      await cleanup();
    },
  };
}
