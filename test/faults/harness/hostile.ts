/**
 * Our client against a hostile server (huge events, `retry: 0`, flapping sessions and
 * epochs, decreasing ids, redirect loops, streams without ids): every case ends in a
 * clear, typed outcome, never a flood — reconnects back off, re-initializes stop at the
 * divergence limit — and the client stays usable where the server lets it.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ContinuityClientTransport, isContinuityError } from '../../../src/client/index.js';
import { prng } from '../../helpers/prng.js';
import { waitFor } from '../../helpers/wait.js';
import { startHostileServer, type Behaviour } from '../hostile-server.js';
import { ZERO } from './check.js';
import type { Family, RunResult, Scenario } from './types.js';

const BEHAVIOURS: readonly Behaviour[] = ['huge-event', 'retry-zero', 'flapping-session', 'flapping-epoch', 'decreasing-ids', 'redirect-loop', 'no-ids'];

/** The least total wait of `n` backoffs from `initial` ms (jitter never goes below half). */
function leastBackoff(initial: number, max: number, n: number): number {
  let sum = 0;
  for (let i = 0; i < n; i++) sum += Math.min(max, initial * 2 ** i) / 2;
  return sum;
}

async function runOne(behaviour: Behaviour, seed: number): Promise<RunResult> {
  const rand = prng(seed);
  const initialDelayMs = 5 + Math.floor(rand() * 15);
  const maxDelayMs = 400;
  const maxDivergences = 2 + Math.floor(rand() * 4);
  const server = await startHostileServer(behaviour, { hugeBytes: 4 * 1024 * 1024 });
  const errors: Error[] = [];
  const transport = new ContinuityClientTransport(server.url, { reconnect: { initialDelayMs, maxDelayMs, maxDivergences }, maxEventBytes: 256 * 1024 });
  const client = new Client({ name: 'hostile', version: '0' });
  client.onerror = (e) => errors.push(e);
  let failure: string | undefined;
  let outcome = 'ok';
  try {
    await client.connect(transport);
    const started = Date.now();
    switch (behaviour) {
      case 'huge-event':
        await waitFor(() => errors.some((e) => isContinuityError(e, 'inbound-event-too-large')), 'inbound-event-too-large');
        await waitFor(() => server.gets >= 2, 'the resumed stream');
        await client.ping();
        outcome = 'inbound-event-too-large';
        break;
      case 'retry-zero':
      case 'no-ids': {
        await waitFor(() => server.gets >= 6, '6 GETs');
        const least = leastBackoff(initialDelayMs, maxDelayMs, 5);
        if (Date.now() - started < least) failure = `6 GETs in ${Date.now() - started} ms, less than the backoff floor ${least} ms`;
        await client.ping();
        outcome = 'backed-off';
        break;
      }
      case 'flapping-session':
      case 'flapping-epoch':
      case 'decreasing-ids':
        await waitFor(() => errors.some((e) => isContinuityError(e, 'divergence-limit')), 'divergence-limit');
        if (server.initializes !== maxDivergences) failure = `${server.initializes} initializes for a limit of ${maxDivergences}`;
        outcome = 'divergence-limit';
        break;
      case 'redirect-loop':
        // fetch follows 20 redirects, then fails: two such failures, backing off between them,
        // told to the application once (one onerror per outage, not one per attempt).
        await waitFor(() => server.gets >= 42 && errors.length >= 1, 'two failed redirect chains');
        await client.ping();
        outcome = 'redirect-failed';
        break;
    }
  } catch (error) {
    outcome = 'failed';
    failure = `${behaviour}: ${(error as Error).message}`;
  } finally {
    await client.close().catch(() => {});
    await server.close();
  }
  return { counts: ZERO, outcome, landed: true, failure };
}

export function hostileFamily(): Family {
  return {
    name: 'hostile',
    setup: () => Promise.resolve(BEHAVIOURS.map((b): Scenario => ({ name: `hostile/${b}`, run: (seed) => runOne(b, seed) }))),
    teardown: () => Promise.resolve(),
  };
}
