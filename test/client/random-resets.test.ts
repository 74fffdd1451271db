/**
 * 510 tool calls through a proxy that resets connections at seeded random points: before
 * forwarding, during, after, mid-response, and stale keep-alives reset while idle. Whatever
 * each call's outcome, the counting tool ran no call twice and the proxy passed no request on
 * twice; a call that succeeded ran once; a call that failed as never sent (retryable) never ran.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ContinuityClientTransport } from '../../src/client/index.js';
import { ContinuityError, ERRORS, isErrorCode } from '../../src/protocol/errors.js';
import { startCountingEndpoint, type CountingEndpoint } from '../helpers/counting-endpoint.js';
import { startResetProxy, type ResetProxy } from '../helpers/reset-proxy.js';

const SEED = Number(process.env.RESETS_SEED ?? 20261203);
const CALLS = 510;
const CLIENTS = 6;

let endpoint: CountingEndpoint;
let proxy: ResetProxy;
before(async () => {
  endpoint = await startCountingEndpoint();
  // Tool calls and the GETs that resume their streams are faulted; the session's own setup is not.
  proxy = await startResetProxy(endpoint.url, SEED, (req, body) => req.method === 'GET' || body.includes('"tools/call"'));
});
after(async () => {
  await proxy.close();
  await endpoint.close();
});

test(`${CALLS} calls through random resets: 0 duplicate executions, no request forwarded twice (seed ${SEED})`, async () => {
  const outcomes = new Map<string, string>();
  const problems: string[] = [];
  let next = 0;
  const clientLoop = async (): Promise<void> => {
    const client = new Client({ name: 'resets', version: '1.0.0' });
    await client.connect(new ContinuityClientTransport(proxy.url, { standaloneStream: false, reconnect: { initialDelayMs: 5, maxDelayMs: 50 } }));
    try {
      for (let k = next++; k < CALLS; k = next++) {
        const tag = `c${k}`;
        try {
          const result = await client.callTool({ name: 'count', arguments: { run: 0, tag } });
          outcomes.set(tag, 'ok');
          if (JSON.stringify(result.content) !== JSON.stringify([{ type: 'text', text: '1' }]))
            problems.push(`${tag}: answered ${JSON.stringify(result.content)}`);
        } catch (error) {
          // Thrown by the transport, or answered on the stream as a JSON-RPC error the SDK wraps (its reason is the code).
          const code = error instanceof ContinuityError ? error.code : (error as { data?: { reason?: unknown } }).data?.reason;
          if (!isErrorCode(code)) {
            outcomes.set(tag, 'untyped');
            problems.push(`${tag}: untyped ${String(error)}`);
            continue;
          }
          outcomes.set(tag, code);
          if (ERRORS[code].retryable && endpoint.ran(0, tag) !== 0) problems.push(`${tag}: failed as never sent (${code}) but ran`);
        }
      }
    } finally {
      await client.close();
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, clientLoop));
  const passedOn = new Map<string, number>();
  for (const body of proxy.forwarded) {
    const tag = /"tools\/call"/.test(body) ? /"tag":"(c\d+)"/.exec(body)?.[1] : undefined;
    if (tag !== undefined) passedOn.set(tag, (passedOn.get(tag) ?? 0) + 1);
  }
  for (let k = 0; k < CALLS; k++) {
    const tag = `c${k}`;
    if (endpoint.ran(0, tag) > 1) problems.push(`${tag}: ran ${endpoint.ran(0, tag)} times`);
    if ((passedOn.get(tag) ?? 0) > 1) problems.push(`${tag}: forwarded ${passedOn.get(tag)} times`);
    if (outcomes.get(tag) === 'ok' && endpoint.ran(0, tag) !== 1) problems.push(`${tag}: succeeded but ran ${endpoint.ran(0, tag)} times`);
  }
  const tally: Record<string, number> = {};
  for (const o of outcomes.values()) tally[o] = (tally[o] ?? 0) + 1;
  console.log(`# outcomes ${JSON.stringify(tally)}; resets ${JSON.stringify(proxy.resets)}`);
  assert.equal(outcomes.size, CALLS);
  assert.deepEqual(problems, [], `seed ${SEED}`);
  assert.ok(proxy.resets.before + proxy.resets.during + proxy.resets.after + proxy.resets['mid-response'] + proxy.resets.stale > CALLS / 4, 'faults were made');
});
