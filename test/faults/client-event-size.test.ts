/**
 * A hostile server sends one 200 MB `data:` line. The client must not buffer it: the
 * stream fails with `inbound-event-too-large` (reported), the connection is dropped, the
 * stream resumes as after any lost connection, and the client keeps working — with the
 * process's peak RSS far below the event's size.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ContinuityClientTransport, isContinuityError } from '../../src/client/index.js';
import { waitFor } from '../helpers/wait.js';
import { startHostileServer } from './hostile-server.js';
import { MiB, memoryOf } from './process.js';

const HUGE = 200 * MiB;
const BOUND = 128 * MiB;

test(`a ${HUGE / MiB} MiB event fails with inbound-event-too-large, memory stays bounded, and the client recovers`, async (t) => {
  const server = await startHostileServer('huge-event', { hugeBytes: HUGE });
  t.after(() => server.close());
  const before = memoryOf(process.pid).peak;
  const errors: Error[] = [];
  const transport = new ContinuityClientTransport(server.url, { reconnect: { initialDelayMs: 10, maxDelayMs: 50 }, trustOpaqueIds: true });
  const client = new Client({ name: 'event-size', version: '0' });
  client.onerror = (e) => errors.push(e);
  t.after(() => client.close());
  await client.connect(transport);

  const tooLarge = await waitFor(() => errors.find((e) => isContinuityError(e, 'inbound-event-too-large')), 'the oversized-event error', 60_000);
  assert.match(tooLarge.message, /maxEventBytes/);
  await waitFor(() => server.gets >= 2, 'the stream resumed after the oversized event', 20_000);
  await client.ping();
  const growth = memoryOf(process.pid).peak - before;
  process.stdout.write(`# a ${HUGE / MiB} MiB event: client peak RSS growth ${(growth / MiB).toFixed(1)} MiB\n`);
  assert.ok(growth < BOUND, `peak RSS grew by ${(growth / MiB).toFixed(1)} MiB (bound ${BOUND / MiB} MiB)`);
});
