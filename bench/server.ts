/**
 * A benchmark server process: `node --import tsx bench/server.ts <contender> [options JSON]`.
 * Listens on an ephemeral loopback port and answers its parent over IPC: its URL when ready,
 * then CPU time and event-loop delay since the last `reset`, and RSS after a full GC.
 * Runs with `--expose-gc` (the parent starts it so).
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createEndpoint, DEFAULT_LIMITS, type EndpointLimits } from '../src/server/index.js';
import { listen } from '../src/node/index.js';
import { memoryStore } from '../src/store/memory/index.js';
import { sqliteStore } from '../src/store/sqlite/index.js';
import type { Store } from '../src/store/types.js';
import { bareServer, ceilingServer, sdkServer } from './servers.js';
import { benchServer, type Contender } from './workload.js';

/** What the parent may change from the defaults, and only where a section needs it. */
export interface ServerOptions {
  /** SQLite file (contender `sqlite`). */
  sqlitePath?: string;
  /** Retention large enough to hold a replay section's log (default retention otherwise). */
  retainEvents?: number;
  /** Session limit for the idle-session section. */
  maxSessions?: number;
  /** Passivate idle sessions after this many ms, where the endpoint has the option. */
  passivateAfterMs?: number;
  /** Offer the WebSocket upgrade (detection and refusal section). */
  upgrade?: boolean;
  /** Mount the 2026-07-28 leg on the same URL (the two-eras A/B, bench/eras-ab.ts). */
  modern?: boolean;
  /** The memory store's process-wide budget, bytes (the retention experiment of bench/cell.ts). */
  memoryMaxTotalBytes?: number;
}

export type ServerRequest = { type: 'reset' } | { type: 'stats' } | { type: 'gc' };
export interface ServerStats {
  cpuUs: number;
  /** The kernel's share of `cpuUs` (page faults, socket writes). */
  sysUs: number;
  /** Minor page faults: first touches of memory the process had not used yet. */
  minorFaults: number;
  eldP99Ms: number;
  eldMaxMs: number;
  rss: number;
}

const [contender, optionsText] = process.argv.slice(2) as [Contender, string | undefined];
const options = JSON.parse(optionsText ?? '{}') as ServerOptions;

/** Does this build's endpoint have passivation? (Sections report which way they ran.) */
export const hasPassivation = 'passivateAfterMs' in DEFAULT_LIMITS;

async function start(): Promise<{ url: string; close: () => Promise<void> }> {
  if (contender === 'memory' || contender === 'sqlite') {
    const retention = options.retainEvents ? { maxEvents: options.retainEvents, maxBytes: 1 << 30 } : undefined;
    const store: Store =
      contender === 'memory'
        ? memoryStore({ ...(retention ? { retention } : {}), ...(options.memoryMaxTotalBytes ? { maxTotalBytes: options.memoryMaxTotalBytes } : {}) })
        : sqliteStore({ path: options.sqlitePath as string, ...(retention ? { retention } : {}) });
    const limits: EndpointLimits & Record<string, number> = {};
    if (options.maxSessions) limits.maxSessions = options.maxSessions;
    if (options.passivateAfterMs && hasPassivation) limits.passivateAfterMs = options.passivateAfterMs;
    const modern = options.modern ? (await import('../src/example/modern/index.js')).createExampleHandler() : undefined;
    const endpoint = createEndpoint({ server: () => benchServer(), store, limits, modern, ...(options.upgrade ? { upgrade: { websocket: true } } : {}) });
    const listener = await listen(endpoint, { port: 0 });
    return {
      url: listener.url.href,
      close: async () => {
        await listener.close();
        await store.close();
      },
    };
  }
  const server: Server =
    contender === 'sdk'
      ? sdkServer(false)
      : contender === 'sdk-store'
        ? sdkServer(true)
        : contender === 'bare-event'
          ? bareServer(0)
          : contender === 'bare-batched'
            ? bareServer(64 * 1024)
            : ceilingServer();
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const eld = monitorEventLoopDelay({ resolution: 1 });
eld.enable();
let cpu = process.cpuUsage();
let faults = process.resourceUsage().minorPageFault;
const running = await start();
const gc = (globalThis as { gc?: () => void }).gc;

process.on('message', (m: ServerRequest) => {
  if (m.type === 'reset') {
    eld.reset();
    cpu = process.cpuUsage();
    faults = process.resourceUsage().minorPageFault;
    process.send?.({ type: 'reset' });
  } else if (m.type === 'stats') {
    const used = process.cpuUsage(cpu);
    const stats: ServerStats = {
      cpuUs: used.user + used.system,
      sysUs: used.system,
      minorFaults: process.resourceUsage().minorPageFault - faults,
      eldP99Ms: eld.count > 0 ? eld.percentile(99) / 1e6 : 0,
      eldMaxMs: eld.count > 0 ? eld.max / 1e6 : 0,
      rss: process.memoryUsage().rss,
    };
    process.send?.({ type: 'stats', stats });
  } else if (m.type === 'gc') {
    for (let i = 0; i < 3; i++) gc?.();
    process.send?.({ type: 'gc', rss: process.memoryUsage().rss, heapUsed: process.memoryUsage().heapUsed });
  }
});
process.on('disconnect', () => void running.close().finally(() => process.exit(0)));
process.send?.({ type: 'ready', url: running.url, passivation: hasPassivation });
