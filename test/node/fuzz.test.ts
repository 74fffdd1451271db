/**
 * Thousands of random and malformed requests over raw sockets to `listen(endpoint)`, and
 * then the server still answers a real `tools/list` through the official SDK client.
 * MCP_FUZZ_REQUESTS sets the count (default 3,000; the long run is 100,000) and
 * MCP_FUZZ_SEED the seed (printed, so a failing run can be replayed).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startFixture, type Fixture } from '../helpers/fixture.js';
import { prng } from '../helpers/prng.js';
import { rawExchange } from '../helpers/raw-http.js';
import { randomRequest } from './fuzz-requests.js';

const COUNT = Number(process.env.MCP_FUZZ_REQUESTS ?? 3_000);
const SEED = Number(process.env.MCP_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const CONCURRENCY = 16;

describe('node adapter: fuzzed requests', () => {
  let f: Fixture;
  before(async () => {
    f = await startFixture({ upgrade: { websocket: true }, limits: { maxBodyBytes: 64 * 1024 } });
  });
  after(() => f.close());

  it(`survives ${COUNT} random malformed requests (seed ${SEED}) and still serves the SDK client`, { timeout: Math.max(120_000, COUNT * 20) }, async () => {
    const r = prng(SEED);
    const statuses = new Map<number, number>();
    const reasons = new Map<string, number>();
    let next = 0;
    let timedOut = 0;
    const started = Date.now();
    const worker = async (): Promise<void> => {
      while (next < COUNT) {
        next++;
        const answer = await rawExchange(f.listener.port, Buffer.from(randomRequest(r, f.listener.port), 'latin1'), 5_000);
        if (answer.timedOut) timedOut++;
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        const reason = /"reason":"([a-z-]+)"/.exec(answer.body)?.[1] ?? (answer.status === 0 ? 'none' : `${answer.status} from node:http`);
        reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const seconds = (Date.now() - started) / 1000;
    const table = [...statuses]
      .sort((a, b) => a[0] - b[0])
      .map(([s, n]) => `${s === 0 ? 'no answer' : s}: ${n}`)
      .join(', ');
    console.log(
      `fuzz reasons: ${[...reasons]
        .sort((a, b) => b[1] - a[1])
        .map(([k, n]) => `${k} ${n}`)
        .join(', ')}`,
    );
    console.log(
      `fuzz seed ${SEED}: ${COUNT} requests in ${seconds.toFixed(1)} s; ${table}; ${timedOut} timed out; ${f.endpoint.sessionCount} sessions; rss ${Math.round(process.memoryUsage().rss / 2 ** 20)} MiB`,
    );

    // No malformed input is an internal error: each is refused with its own code.
    assert.equal(
      statuses.get(500) ?? 0,
      0,
      `500s (seed ${SEED}); errors: ${f.errors
        .slice(0, 3)
        .map((e) => e.stack)
        .join('\n')}`,
    );
    assert.deepEqual(
      f.errors.map((e) => e.message),
      [],
      `seed ${SEED}`,
    );

    const client = new Client({ name: 'after-fuzz', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(f.url));
    try {
      const { tools } = await client.listTools();
      assert.ok(tools.length > 0, 'tools/list answers after the fuzz');
    } finally {
      await client.close();
    }
  });
});
