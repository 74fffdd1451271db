/**
 * What an operator sees of a drain, from a real `serve` process: a `drain-start` line as the
 * SIGTERM lands (not only at the end, so a replica draining for its whole window never
 * looks hung), an end line whose outcome is true both ways (`completed` when the call in
 * flight finished, `abandoned` when the window cut it), and SIGINT in the middle of a
 * drain stopping the process at once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { startCli, stop } from './run-cli.js';
import { initialize, rpc, send, sessionHeaders } from '../helpers/sse-client.js';
import { waitFor } from '../helpers/wait.js';

interface Served {
  child: ChildProcess;
  url: URL;
  lines(): Array<Record<string, unknown>>;
  exited: Promise<number | null>;
}

async function serve(drainMs: number): Promise<Served> {
  const args = ['serve', '--port', '0', '--store', 'memory', '--log-format', 'json', '--drain-ms', String(drainMs), '--unready-ms', '0'];
  const { child, line, output } = await startCli(args);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = new URL((JSON.parse(line) as { url: string }).url);
  const lines = (): Array<Record<string, unknown>> =>
    output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { child, url, lines, exited };
}

/** Starts an `emit` call of `count` steps `intervalMs` apart; resolves once its first event arrived. */
async function callInFlight(url: URL, count: number, intervalMs: number): Promise<{ done: Promise<unknown> }> {
  const h = await initialize(url);
  let started!: () => void;
  const first = new Promise<void>((resolve) => (started = resolve));
  const done = send(url, {
    body: rpc('tools/call', { name: 'emit', arguments: { count, intervalMs } }),
    headers: sessionHeaders(h),
    cutWhen: (_e, all) => {
      if (all.some((e) => e.data !== '')) started();
      return false;
    },
    timeoutMs: 60_000,
  });
  await Promise.race([first, done]);
  // Wrapped: an async function returning the promise itself would wait for the whole call.
  return { done };
}

const event = (served: Served, name: string): Record<string, unknown> | undefined => served.lines().find((l) => l.event === name);

for (const [outcome, drainMs, steps] of [
  ['completed', 8_000, 4],
  ['abandoned', 400, 40],
] as const) {
  test(`SIGTERM with a call in flight: drain-start at once, and the end line says ${outcome}`, { timeout: 120_000 }, async (t) => {
    const served = await serve(drainMs);
    t.after(() => stop(served.child));
    const { done: call } = await callInFlight(served.url, steps, 250);
    const signalled = Date.now();
    served.child.kill('SIGTERM');
    await waitFor(() => event(served, 'drain-start') !== undefined, 'the drain-start line');
    const start = event(served, 'drain-start') as Record<string, unknown>;
    const lagMs = Date.parse(start.time as string) - signalled;
    console.log(`# drain-start logged ${lagMs} ms after SIGTERM was sent`);
    // Written in the signal handler before anything is awaited; the bound is one only a stall misses.
    assert.ok(lagMs < 2_000, `drain-start came ${lagMs} ms after the signal`);
    assert.deepEqual([start.signal, start.sessions, start.drainMs], ['SIGTERM', 1, drainMs]);
    assert.equal(await served.exited, 0, 'a drain exits 0');
    const end = event(served, 'drain');
    assert.equal(end?.outcome, outcome, `the end line: ${JSON.stringify(end)}`);
    await call;
  });
}

test('SIGINT during a drain stops the process at once (exit 130)', { timeout: 120_000 }, async (t) => {
  const served = await serve(60_000);
  t.after(() => stop(served.child));
  void (await callInFlight(served.url, 200, 250)).done.catch(() => {});
  served.child.kill('SIGTERM');
  await waitFor(() => event(served, 'drain-start') !== undefined, 'the drain-start line');
  served.child.kill('SIGINT');
  // The drain had a minute left: only an exit that did not wait for it ends this test in time.
  assert.equal(await served.exited, 130);
  assert.equal(event(served, 'drain'), undefined, 'no end line: the drain was cut short, not finished');
});
