/**
 * A total bound on a call's wait through an outage (`reconnect.maxOutageMs`). A server whose
 * `Retry-After` reaches past the bound (99999999999 s, a date in 2100) fails the call at once,
 * as not accepted; waits of a second each stop once the bound cannot hold another; refused
 * connections stop at the bound however many attempts are left. Every such failure says
 * truthfully that the call was never sent (retryable), and the counting tool never ran it.
 * A call the server took, whose stream is cut, resumes within the same bound and then fails
 * as one that may have run (`request-abandoned`, `mayHaveRun: true`).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ContinuityClientTransport } from '../../src/client/index.js';
import type { ReconnectOptions } from '../../src/client/backoff.js';
import { ContinuityError } from '../../src/protocol/errors.js';
import { startCountingEndpoint, type CountingEndpoint } from '../helpers/counting-endpoint.js';
import { startOutageFront, type OutageFront } from '../helpers/outage-front.js';
import { waitFor, within } from '../helpers/wait.js';

let endpoint: CountingEndpoint;
before(async () => {
  endpoint = await startCountingEndpoint();
});
after(() => endpoint.close());

async function connect(front: OutageFront, reconnect?: ReconnectOptions, fetchVia?: (url: URL, init: RequestInit) => Promise<Response>): Promise<Client> {
  const client = new Client({ name: 'outage-bound', version: '1.0.0' });
  await client.connect(new ContinuityClientTransport(front.url, { standaloneStream: false, reconnect, fetch: fetchVia }));
  return client;
}

/** The error a call fails with during an outage (the 60 s bound is a deadlock guard only). */
function callFailure(call: Promise<unknown>): Promise<unknown> {
  return within(
    call.then(
      () => assert.fail('the call completed during the outage'),
      (e: unknown) => e,
    ),
    'the call to fail',
    60_000,
  );
}

/** The call fails, typed, as never sent; the counting tool never ran it. */
async function failsUnsent(client: Client, run: number, code: string): Promise<ContinuityError> {
  // No SDK timeout: the transport's bound must end the call (a deadlock guard only).
  const call = client.callTool({ name: 'count', arguments: { run, tag: 'x' } }, undefined, { timeout: 600_000 });
  const error = await callFailure(call);
  assert.ok(error instanceof ContinuityError, `typed: ${String(error)}`);
  assert.equal(error.code, code);
  assert.equal(error.retryable, true, 'never sent: it may be sent again');
  assert.equal(endpoint.ran(run, 'x'), 0);
  return error;
}

const attemptsOf = (front: OutageFront): number => front.received.filter((r) => r.arguments?.tag === 'x').length;

describe('reconnect.maxOutageMs', () => {
  for (const [name, retryAfter] of [
    ['99999999999 seconds', '99999999999'],
    ['a date in 2100', 'Fri, 01 Jan 2100 00:00:00 GMT'],
  ] as const) {
    it(`a Retry-After of ${name} (past the default bound) fails the call at once, as not accepted`, async (t) => {
      const front = await startOutageFront(endpoint.url);
      const client = await connect(front);
      t.after(async () => {
        await client.close();
        await front.close();
      });
      front.mode = { retryAfter };
      await failsUnsent(client, 1, 'server-draining');
      assert.equal(attemptsOf(front), 1, 'one attempt, no wait');
    });
  }

  it('waits of a second stop once the bound cannot hold another: at most 3 attempts in 2.5 s, of 1000 allowed', async (t) => {
    const front = await startOutageFront(endpoint.url);
    const client = await connect(front, { maxOutageMs: 2500, maxRequestAttempts: 1000 });
    t.after(async () => {
      await client.close();
      await front.close();
    });
    front.mode = { retryAfter: '1' };
    await failsUnsent(client, 2, 'server-draining');
    // Each wait is at least the server's second, and a third would end past 2.5 s.
    assert.ok(attemptsOf(front) >= 1 && attemptsOf(front) <= 3, `attempts: ${attemptsOf(front)}`);
  });

  it('refused connections stop at the bound with server-unreachable, however many attempts are left', async (t) => {
    const front = await startOutageFront(endpoint.url);
    const client = await connect(front, { maxOutageMs: 300, maxRequestAttempts: 1_000_000, initialDelayMs: 20, maxDelayMs: 50 });
    t.after(async () => {
      await client.close();
      await front.close();
    });
    await front.refuse();
    const error = await failsUnsent(client, 3, 'server-unreachable');
    const detail = error.detail as { attempts: number; outageMs: number };
    assert.ok(detail.attempts >= 2 && detail.attempts < 1_000_000, `attempts: ${detail.attempts}`);
    assert.ok(detail.outageMs >= 300, `stopped at the bound, not before: ${detail.outageMs} ms`);
  });

  it('a call whose response stream was cut resumes within the same bound, then fails as one that may have run', async (t) => {
    const front = await startOutageFront(endpoint.url);
    let answered = false;
    const client = await connect(front, { maxOutageMs: 400, maxRequestAttempts: 1_000_000, initialDelayMs: 20, maxDelayMs: 50 }, async (url, init) => {
      const response = await fetch(url, init);
      if (typeof init.body === 'string' && init.body.includes('"tools/call"')) answered = true;
      return response;
    });
    t.after(async () => {
      endpoint.release();
      await client.close();
      await front.close();
    });
    const call = client.callTool({ name: 'wait', arguments: { run: 4, tag: 'x' } }, undefined, { timeout: 600_000 });
    await waitFor(() => endpoint.ran(4, 'x') === 1 && answered, 'the call to be running, its stream open');
    // The deploy window begins with the stream cut: every resume is refused.
    await front.refuse(true);
    const error = await callFailure(call);
    // Failed on its stream, the error reaches the SDK as a JSON-RPC error whose reason is the code.
    const code = error instanceof ContinuityError ? error.code : (error as { data?: { reason?: unknown } }).data?.reason;
    assert.equal(code, 'request-abandoned', String(error));
    const detail = error instanceof ContinuityError ? error.detail : (error as { data?: Record<string, unknown> }).data;
    assert.equal(detail?.mayHaveRun, true, 'it may have run');
    assert.match(String(error), /maxOutageMs/);
  });

  it('is validated: a negative bound is a RangeError, a string a TypeError, each naming it', () => {
    const url = 'http://127.0.0.1:1/mcp';
    assert.throws(
      () => new ContinuityClientTransport(url, { reconnect: { maxOutageMs: -1 } }),
      (e: unknown) => e instanceof RangeError && /reconnect\.maxOutageMs/.test(e.message),
    );
    assert.throws(() => new ContinuityClientTransport(url, { reconnect: { maxOutageMs: Infinity } }), RangeError);
    assert.throws(
      () => new ContinuityClientTransport(url, { reconnect: { maxOutageMs: '5' as unknown as number } }),
      (e: unknown) => e instanceof TypeError && /reconnect\.maxOutageMs/.test(e.message),
    );
  });
});
