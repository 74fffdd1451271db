/**
 * The client must not flood a hostile server: `retry: 0` is a floor, not a zero delay;
 * reconnects leave no abort listener behind; a server whose session id or epoch flaps, or
 * whose ids go down, gets a few re-initializes with growing waits, then a transport that
 * fails with `divergence-limit` instead of one new session per turn of a loop.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ContinuityClientTransport, isContinuityError, type DivergenceReport } from '../../src/client/index.js';
import { waitFor } from '../helpers/wait.js';
import { startHostileServer, type Behaviour } from './hostile-server.js';

async function connect(
  behaviour: Behaviour,
  t: { after(fn: () => unknown): void },
  reconnect: Record<string, number> = { initialDelayMs: 10, maxDelayMs: 200 },
) {
  const server = await startHostileServer(behaviour);
  t.after(() => server.close());
  const errors: Error[] = [];
  const reports: DivergenceReport[] = [];
  let closed = false;
  const transport = new ContinuityClientTransport(server.url, { reconnect, onDivergence: (r) => reports.push(r) });
  const client = new Client({ name: 'flood', version: '0' });
  client.onerror = (e) => errors.push(e);
  client.onclose = () => {
    closed = true;
  };
  t.after(() => client.close());
  await client.connect(transport);
  return { server, client, transport, errors, reports, closed: () => closed };
}

test('retry: 0 does not mean zero backoff: reconnects without progress back off exponentially', async (t) => {
  const { server } = await connect('retry-zero', t, { initialDelayMs: 10, maxDelayMs: 1000 });
  const started = Date.now();
  await waitFor(() => server.gets >= 8, '8 GETs', 20_000);
  const elapsed = Date.now() - started;
  // Seven waits of at least half of 10, 20, 40, … 640 ms (jitter never goes below half): 635 ms.
  assert.ok(elapsed >= 635, `8 GETs took only ${elapsed} ms: the client does not back off`);
});

test('thousands of reconnects leave no abort listener behind (no MaxListenersExceededWarning)', async (t) => {
  const warnings: Error[] = [];
  const onWarning = (w: Error): void => {
    if (w.name === 'MaxListenersExceededWarning') warnings.push(w);
  };
  process.on('warning', onWarning);
  t.after(() => process.off('warning', onWarning));
  // Zero backoff on purpose (an explicit option): as fast a reconnect loop as possible.
  const { server } = await connect('retry-zero', t, { initialDelayMs: 0, maxDelayMs: 0 });
  await waitFor(() => server.gets >= 2000, '2000 GETs', 120_000);
  // A warning is emitted on the next tick after the listener that crosses the limit.
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(
    warnings.map((w) => w.message),
    [],
  );
});

for (const behaviour of ['flapping-session', 'flapping-epoch', 'decreasing-ids'] as const) {
  test(`${behaviour}: a few re-initializes with growing waits, then divergence-limit`, async (t) => {
    const { server, client, errors, reports, closed } = await connect(behaviour, t);
    const failure = await waitFor(() => errors.find((e) => isContinuityError(e, 'divergence-limit')), 'divergence-limit', 30_000);
    assert.match(failure.message, /5 times in a row/);
    await waitFor(() => closed(), 'the transport closed');
    assert.equal(server.initializes, 5, 'the first session and four re-initializes, no more');
    assert.deepEqual(
      reports.map((r) => r.consecutive),
      [1, 2, 3, 4, 5],
    );
    assert.equal(reports[0]?.backoffMs, 0, 'the first divergence re-initializes at once');
    for (const r of reports.slice(1)) assert.ok(r.backoffMs > 0, `divergence ${r.consecutive} in a row waited`);
    assert.ok(isContinuityError(reports.at(-1)?.reinitializeError, 'divergence-limit'), 'the last report names the limit');
    const initializes = server.initializes;
    await assert.rejects(client.ping(), 'a closed transport refuses new requests');
    assert.equal(server.initializes, initializes, 'nothing re-initializes after the limit');
  });
}
