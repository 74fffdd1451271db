/**
 * Given up means never sent. The SDK `Client` gives up on a call (its own timeout, or the
 * application's `AbortSignal`) while the client rides through an outage: a front that answers
 * `503` with `Retry-After`, or refuses connections (a deploy window). Once the application was
 * told, no attempt of the call may leave the client: after the outage ends, the counting tool
 * must never have run it, over 200 seeded runs. A call given up while an attempt was under
 * way has its cancellation sent and is reported as "may have run"; one given up between
 * attempts sends nothing at all.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { ContinuityClientTransport } from '../../src/client/index.js';
import type { ReconnectOptions } from '../../src/client/backoff.js';
import { ContinuityError } from '../../src/protocol/errors.js';
import { startCountingEndpoint, type CountingEndpoint } from '../helpers/counting-endpoint.js';
import { startOutageFront, type OutageFront } from '../helpers/outage-front.js';
import { prng } from '../helpers/prng.js';
import { waitFor, within } from '../helpers/wait.js';

const SEED = Number(process.env.GIVE_UP_SEED ?? 20261203);
const RUNS = Number(process.env.GIVE_UP_RUNS ?? 200);
const CONCURRENCY = 12;

/** The call under test carries `tag: 'x'`. */
const isX = (body: unknown): boolean => typeof body === 'string' && body.includes('"tools/call"') && body.includes('"tag":"x"');

interface Observed {
  client: Client;
  transport: ContinuityClientTransport;
  /** Attempts (fetches) of the call under test now under way. */
  inFlight: () => number;
  /** Has the transport's `send` of the call under test ended (no attempt of it can follow)? */
  settled: () => boolean;
  /** Errors the client was told of through `onerror`. */
  errors: Error[];
}

/** A client through `front`, with taps on the call under test: its fetches, and the end of its `send`. */
async function connect(front: OutageFront, reconnect: ReconnectOptions): Promise<Observed> {
  let inFlight = 0;
  let settled = false;
  const transport = new ContinuityClientTransport(front.url, {
    standaloneStream: false,
    reconnect,
    fetch: (url, init) => {
      if (!isX(init.body)) return fetch(url, init);
      inFlight++;
      return fetch(url, init).finally(() => inFlight--);
    },
  });
  const send = transport.send.bind(transport);
  transport.send = (message: JSONRPCMessage, options) => {
    const sent = send(message, options);
    if (isX(JSON.stringify(message))) {
      sent.then(
        () => (settled = true),
        () => (settled = true),
      );
    }
    return sent;
  };
  const client = new Client({ name: 'give-up', version: '1.0.0' });
  const errors: Error[] = [];
  client.onerror = (e) => errors.push(e);
  await client.connect(transport);
  return { client, transport, inFlight: () => inFlight, settled: () => settled, errors };
}

const abandoned = (errors: Error[]): ContinuityError[] =>
  errors.filter((e): e is ContinuityError => e instanceof ContinuityError && e.code === 'request-abandoned');

let endpoint: CountingEndpoint;
before(async () => {
  endpoint = await startCountingEndpoint();
});
after(() => endpoint.close());

interface Plan {
  outage: '503' | 'refused';
  retryAfter: string;
  giveUp: 'timeout' | 'abort';
  afterMs: number;
  initialDelayMs: number;
}

function plan(rand: () => number): Plan {
  const retryAfters = ['0', '1', '2', 'date+1', 'date+2'];
  return {
    outage: rand() < 0.5 ? '503' : 'refused',
    retryAfter: retryAfters[Math.floor(rand() * retryAfters.length)] as string,
    giveUp: rand() < 0.5 ? 'timeout' : 'abort',
    afterMs: 150 + Math.floor(rand() * 250),
    initialDelayMs: 10 + Math.floor(rand() * 50),
  };
}

/** One seeded run; throws naming what went wrong. */
async function run(i: number): Promise<void> {
  const p = plan(prng(SEED + i));
  const front = await startOutageFront(endpoint.url);
  const c = await connect(front, { initialDelayMs: p.initialDelayMs, maxDelayMs: 200 });
  try {
    // The outage begins; the call is made during it, and given up before it ends.
    if (p.outage === 'refused') await front.refuse();
    else {
      const seconds = p.retryAfter.startsWith('date+') ? Number(p.retryAfter.slice(5)) : undefined;
      front.mode = { retryAfter: seconds === undefined ? p.retryAfter : new Date(Date.now() + seconds * 1000).toUTCString() };
    }
    const controller = new AbortController();
    const options = p.giveUp === 'timeout' ? { timeout: p.afterMs } : { signal: controller.signal, timeout: 600_000 };
    const call = c.client.callTool({ name: 'count', arguments: { run: i, tag: 'x' } }, undefined, options);
    // The application's own deadline, as an application sets one.
    if (p.giveUp === 'abort') setTimeout(() => controller.abort(new Error('the application gave up')), p.afterMs).unref();
    const told = await call.then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(told !== undefined, 'the call completed during the outage');
    assert.ok(!(told instanceof ContinuityError), `the SDK's own error, not the transport's: ${String(told)}`);
    // Attempts under way when the application was told end first (refused: the outage stands), then the outage ends.
    await waitFor(() => c.inFlight() === 0, 'the attempts under way to end');
    if (p.outage === 'refused') await front.reopen();
    else front.mode = 'forward';
    await waitFor(c.settled, "the given-up call's send to end");
    // The server is back: a later call runs, once.
    const later = await within(c.client.callTool({ name: 'count', arguments: { run: i, tag: 'after' } }), 'a later call');
    assert.deepEqual(later.content, [{ type: 'text', text: '1' }]);
    assert.equal(endpoint.ran(i, 'x'), 0, 'the given-up call ran');
    assert.equal(front.received.filter((r) => r.forwarded && r.arguments?.tag === 'x').length, 0, 'the given-up call was forwarded');
  } finally {
    await c.client.close().catch(() => {});
    await front.close();
  }
}

describe('given up means never sent', () => {
  it(`${RUNS} seeded runs through 503 + Retry-After and refused connections, given up by SDK timeouts and aborts: 0 executions after the application was told (seed ${SEED})`, async () => {
    const failures: string[] = [];
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let i = next++; i < RUNS; i = next++) {
        try {
          await run(i);
        } catch (error) {
          failures.push(`run ${i} (${JSON.stringify(plan(prng(SEED + i)))}; replay: GIVE_UP_SEED=${SEED}): ${(error as Error).message}`);
        }
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    assert.deepEqual(failures, [], `${failures.length} of ${RUNS} runs failed`);
  });

  it('given up between attempts: the cancellation is not sent, the call never reaches the server, nothing is reported', async (t) => {
    const front = await startOutageFront(endpoint.url);
    const c = await connect(front, { initialDelayMs: 20, maxDelayMs: 200 });
    t.after(async () => {
      await c.client.close();
      await front.close();
    });
    front.mode = { retryAfter: '5' };
    const controller = new AbortController();
    const call = c.client.callTool({ name: 'count', arguments: { run: -1, tag: 'x' } }, undefined, { signal: controller.signal });
    // The first attempt was refused, and the client waits the server's 5 s.
    await waitFor(() => front.received.some((r) => r.arguments?.tag === 'x') && c.inFlight() === 0, 'the first attempt to be refused');
    controller.abort(new Error('the application gave up'));
    await assert.rejects(call);
    front.mode = 'forward';
    await waitFor(c.settled, "the given-up call's send to end");
    await c.client.callTool({ name: 'count', arguments: { run: -1, tag: 'after' } });
    const id = front.received.find((r) => r.arguments?.tag === 'x')?.id;
    assert.equal(front.received.filter((r) => r.arguments?.tag === 'x').length, 1, 'one attempt, refused');
    assert.equal(front.received.filter((r) => r.method === 'notifications/cancelled' && r.id === id).length, 0, 'no cancellation sent');
    assert.equal(endpoint.ran(-1, 'x'), 0);
    assert.deepEqual(abandoned(c.errors), []);
  });

  it('given up while an attempt was under way: the cancellation goes, and onerror says it may have run (it did)', async (t) => {
    const front = await startOutageFront(endpoint.url);
    const c = await connect(front, { initialDelayMs: 20, maxDelayMs: 200 });
    t.after(async () => {
      await c.client.close();
      await front.close();
    });
    // The front holds the call, as a slow network or a busy proxy does, until the SDK timed out.
    front.hold = (r) => r.arguments?.tag === 'x';
    await assert.rejects(c.client.callTool({ name: 'count', arguments: { run: -2, tag: 'x' } }, undefined, { timeout: 200 }));
    const id = front.received.find((r) => r.arguments?.tag === 'x')?.id;
    assert.ok(id !== undefined);
    await waitFor(() => front.received.some((r) => r.method === 'notifications/cancelled' && r.id === id), 'the cancellation to be sent');
    front.release();
    const [report] = await waitFor(() => abandoned(c.errors).length > 0 && abandoned(c.errors), 'the "may have run" report');
    assert.deepEqual(report?.detail, { requestId: id, mayHaveRun: true });
    assert.equal(report?.retryable, false);
    await waitFor(() => endpoint.ran(-2, 'x') === 1, 'the call to have run, as reported');
    await waitFor(c.settled, "the given-up call's send to end");
    assert.equal(front.received.filter((r) => r.arguments?.tag === 'x').length, 1, 'sent once, never again');
  });
});
