/** `mcp-continuity demo`: our client and the official SDK client, side by side, through faults. */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startHttpChaosProxy } from '../../chaos/http-proxy.js';
import { UsageError } from '../usage.js';
import { observe, ServerProcess, type Observation } from './scenario.js';
import { startReferenceServer } from './sdk-server.js';
import { LEGEND, renderScenario, summary } from './render.js';

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

/** Scenario 3: the same clients against the SDK's reference server, one cut inside a burst. */
async function referenceBurst(events: number): Promise<Observation[]> {
  const reference = await startReferenceServer();
  try {
    const rows: Observation[] = [];
    for (const client of ['mcp-continuity', 'official SDK'] as const) {
      // Cut the first response only: the resume itself is left alone.
      const proxy = await startHttpChaosProxy({
        targets: [reference.url.origin],
        cutAfterEvents: 30,
        mode: 'rst',
        onFault: () => proxy.configure({ cutAfterEvents: undefined }),
      });
      try {
        rows.push(await observe(client, new URL(reference.url.pathname, proxy.url), events, { hangMs: 5_000, intervalMs: 0 }));
      } finally {
        await proxy.close();
      }
    }
    return rows;
  } finally {
    await reference.close();
  }
}

/** Runs the demo; resolves to its exit code. */
export async function demo(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { events: { type: 'string', default: '200' }, 'no-color': { type: 'boolean', default: false } },
    strict: true,
  });
  if (!/^\d+$/.test(values.events) || Number(values.events) < 30 || Number(values.events) > 5000)
    throw new UsageError(`--events must be a whole number from 30 to 5000, got ${JSON.stringify(values.events)}`, 'demo');
  const events = Number(values.events);
  const colour = process.stdout.isTTY && !values['no-color'] && !process.env['NO_COLOR'];
  const dir = mkdtempSync(join(tmpdir(), 'mcp-continuity-demo-'));
  const server = new ServerProcess(await freePort(), join(dir, 'demo.db'));
  const started = performance.now();
  try {
    const direct = await server.start();
    const proxy = await startHttpChaosProxy({ targets: [direct.origin], cutAfterEvents: Math.max(10, Math.floor(events / 6)), mode: 'rst', seed: 1 });
    const url = new URL(direct.pathname, proxy.url);
    console.log(`server ${direct.href} (SQLite in ${dir}), chaos proxy ${url.href}`);
    console.log(`each client calls emit for ${events} events, 10 ms apart; under each client, its events 1…${events}:`);
    console.log(`  ${LEGEND}\n`);
    try {
      const cut: Observation[] = [];
      for (const client of ['mcp-continuity', 'official SDK'] as const) cut.push(await observe(client, url, events, { hangMs: 10_000 }));
      console.log(renderScenario(`1. the proxy resets every response after ${Math.max(10, Math.floor(events / 6))} events`, cut, colour));
      proxy.configure({ cutAfterEvents: undefined });
      const restart: Observation[] = [];
      for (const client of ['mcp-continuity', 'official SDK'] as const) {
        restart.push(
          await observe(client, url, events, {
            hangMs: 10_000,
            trigger: Math.floor(events / 3),
            during: async () => {
              await server.kill9();
              await server.start();
            },
          }),
        );
      }
      console.log(`\n${renderScenario(`2. kill -9 of the server after ${Math.floor(events / 3)} events, restarted on the same SQLite file`, restart, colour)}`);
      const burst = await referenceBurst(events);
      console.log(
        `\n${renderScenario(`3. the official SDK server (InMemoryEventStore): ${events} events in one burst, the stream reset after 30`, burst, colour)}`,
      );
      console.log(`\n${summary([...cut, ...restart, ...burst])}; finished in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    } finally {
      await proxy.close();
    }
  } finally {
    await server.kill9();
    rmSync(dir, { recursive: true, force: true });
  }
  return 0;
}
