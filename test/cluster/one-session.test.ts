/**
 * One session on every replica (docs/clusters.md): what holds on the owner holds wherever
 * a request lands. Two or three endpoints share one memory store in this process (the
 * cluster protocol with an in-process bus and lease table), which is enough to prove each
 * point: at most once, reader bounds, refusals and lifecycle, priming, and an owner that
 * stops answering.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { memoryStore } from '../../src/store/memory/index.js';
import { startFixture, type Fixture } from '../helpers/fixture.js';
import { prng } from '../helpers/prng.js';
import { SHARED_REDIS_URL, randomPrefix, redisOrSkip } from '../helpers/redis.js';
import { initialize, messages, rpc, send, sessionHeaders, type Handshake } from '../helpers/sse-client.js';
import { waitFor, within } from '../helpers/wait.js';

const SEED = Number(process.env.AT_MOST_ONCE_SEED ?? 2020);
const UPGRADE_ACCEPTED = 'notifications/mcp-continuity/upgrade-accepted';

type Answer = { id?: unknown; result?: unknown; error?: { code?: number; data?: { reason?: string; mayHaveRun?: boolean } } };

/** The answer to request `id` in a POST's response: its last SSE message, or a JSON refusal. */
function answerOf(r: { status: number; events: { data: string }[]; text: string }): Answer {
  if (r.status === 200) return messages(r.events).at(-1) ?? {};
  return JSON.parse(r.text) as Answer;
}

/** A replica process running {@link blockingServer}-style `once` tools; `runs` counts each key's runs across processes. */
async function startBlockingReplica(prefix: string, leaseMs: number, runs: Map<string, number>): Promise<{ url: URL; child: ChildProcess }> {
  const script = fileURLToPath(new URL('../helpers/blocking-replica.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', script, SHARED_REDIS_URL, prefix, String(leaseMs)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`replica exited with ${code}`)));
    lines.on('line', (line) => {
      if (line.startsWith('ready ')) resolve({ url: new URL(line.slice('ready '.length)), child });
      else if (line.startsWith('ran ')) runs.set(line.slice(4), (runs.get(line.slice(4)) ?? 0) + 1);
    });
  });
}

describe('at most once: a call carried to an owner that blocks its process past its lease (two processes on Redis)', () => {
  const runs = new Map<string, number>();
  const LEASE_MS = 150;
  const replicas: Array<{ url: URL; child: ChildProcess }> = [];
  before(async () => {
    if (!(await redisOrSkip('the at-most-once test'))) return;
    const prefix = randomPrefix('once');
    for (let i = 0; i < 2; i++) replicas.push(await startBlockingReplica(prefix, LEASE_MS, runs));
  });
  after(() => {
    for (const r of replicas) r.child.kill('SIGKILL');
  });

  it(
    `100 seeded runs through the non-owner: none runs twice; each ends with its result or request-abandoned that may have run (seed ${SEED})`,
    { timeout: 300_000 },
    async (t) => {
      if (replicas.length === 0) return t.skip('no Redis');
      const [owner, other] = replicas.map((r) => r.url) as [URL, URL];
      const rand = prng(SEED);
      const outcomes = { result: 0, abandoned: 0 };
      for (let i = 0; i < 100; i++) {
        const h = await initialize(owner);
        const key = `k${i}`;
        const blockMs = Math.round(LEASE_MS * (1.2 + rand() * 2));
        const call = rpc('tools/call', { name: 'once', arguments: { key, blockMs } });
        const r = await send(other, { body: call, headers: sessionHeaders(h), timeoutMs: 20_000 });
        const answer = answerOf(r);
        assert.deepEqual(answer.id, call.id, `run ${i}: the answer is the call's (HTTP ${r.status}: ${r.text})`);
        if (answer.result !== undefined) outcomes.result++;
        else {
          assert.equal(answer.error?.data?.reason, 'request-abandoned', `run ${i}: ${JSON.stringify(answer)}`);
          assert.equal(answer.error?.data?.mayHaveRun, true, `run ${i}: an abandoned call says it may have run`);
          outcomes.abandoned++;
        }
        // The session goes on, wherever it is held now; nothing runs the call again.
        // A request carried to the owner while it is still blocked meets the same unknown fate
        // (request-abandoned, not lost): the session is never gone (no 404), and answers once the
        // owner is back or taken over.
        let next = await send(other, { body: rpc('tools/list'), headers: sessionHeaders(h), timeoutMs: 20_000 });
        for (let tries = 1; next.status === 500 && answerOf(next).error?.data?.reason === 'request-abandoned' && tries < 5; tries++)
          next = await send(other, { body: rpc('tools/list'), headers: sessionHeaders(h), timeoutMs: 20_000 });
        assert.equal(next.status, 200, `run ${i}: the session goes on (${next.text})`);
        // A result was reported before it was sent; an abandoned call may or may not have run.
        if (answer.result !== undefined) assert.equal(runs.get(key), 1, `run ${i}: ran ${runs.get(key)} times`);
        assert.ok((runs.get(key) ?? 0) <= 1, `run ${i}: ran ${runs.get(key)} times`);
      }
      const twice = [...runs.values()].filter((n) => n > 1).length;
      console.log(`# at most once: ${outcomes.result} results, ${outcomes.abandoned} request-abandoned (mayHaveRun), ${twice} double runs`);
      assert.equal(twice, 0);
    },
  );
});

describe('one session on every replica (memory store shared by two endpoints)', () => {
  const store = memoryStore();
  const replicas: Fixture[] = [];
  before(async () => {
    for (let i = 0; i < 2; i++) {
      replicas.push(await startFixture({ store, upgrade: { websocket: true }, keepAliveMs: 0, cluster: { enabled: true, leaseMs: 300, replicaId: `s${i}` } }));
    }
  });
  after(async () => {
    for (const r of replicas) await r.close().catch(() => {});
  });
  const at = (i: number): URL => (replicas[i] as Fixture).url;

  /** Opens a GET and resolves at its status, leaving the body unread (a client that stopped reading). */
  function openUnread(url: URL, headers: Record<string, string>): Promise<{ status: number; req: ClientRequest; res: IncomingMessage }> {
    return new Promise((resolve, reject) => {
      const req = httpRequest(url, { method: 'GET', headers: { accept: 'text/event-stream', ...headers } }, (res) =>
        resolve({ status: res.statusCode ?? 0, req, res }),
      );
      req.on('error', reject);
      req.end();
    });
  }

  /** 24 unread resumes of a finished 15 MiB stream through `url`: the statuses. */
  async function unreadResumes(url: URL, h: Handshake, cursor: string): Promise<number[]> {
    const opened = [];
    for (let i = 0; i < 24; i++) opened.push(await openUnread(url, sessionHeaders(h, { 'last-event-id': cursor })));
    for (const o of opened) o.req.destroy();
    return opened.map((o) => o.status);
  }

  it('reader bounds: 24 unread resumes of a finished 15 MiB stream get the same 429s on the owner and on the other replica', { timeout: 60_000 }, async () => {
    const h = await initialize(at(0));
    const call = rpc('tools/call', { name: 'emit', arguments: { count: 240, bytes: 64 * 1024 } });
    const full = await send(at(0), { body: call, headers: sessionHeaders(h), timeoutMs: 30_000 });
    assert.equal(full.status, 200);
    const cursor = full.events[0]?.id as string;
    const count = (statuses: number[]): string => `${statuses.filter((s) => s === 200).length}×200 + ${statuses.filter((s) => s === 429).length}×429`;
    const onOwner = await unreadResumes(at(0), h, cursor);
    assert.equal(count(onOwner), '16×200 + 8×429');
    const elsewhere = await unreadResumes(at(1), h, cursor);
    assert.equal(count(elsewhere), count(onOwner), 'the other replica bounds its readers as the owner does');
  });

  it('refusals: a resume at the upgrade boundary gets 410 session-superseded on the other replica too, and the session ends', async () => {
    const h = await initialize(at(0));
    const offer = await new Promise<{ id: string; req: ClientRequest }>((resolve, reject) => {
      const req = httpRequest(at(0), { method: 'GET', headers: { accept: 'text/event-stream', 'x-mcp-upgrade': 'websocket', ...sessionHeaders(h) } }, (res) => {
        res.setEncoding('utf8');
        let text = '';
        res.on('data', (chunk: string) => {
          text += chunk;
          const m = /id: ([^\n]+)\n(?:retry: \d+\n)?data: (\{[^\n]*upgrade-accepted[^\n]*\})/.exec(text);
          if (m && (JSON.parse(m[2] as string) as { method?: string }).method === UPGRADE_ACCEPTED) resolve({ id: m[1] as string, req });
        });
      });
      req.on('error', reject);
      req.end();
    });
    offer.req.destroy();
    const started = performance.now();
    const resumed = await send(at(1), { headers: sessionHeaders(h, { 'last-event-id': offer.id }), timeoutMs: 5_000 });
    const elapsed = performance.now() - started;
    console.log(`# resume at the upgrade boundary on the other replica: ${resumed.status} in ${elapsed.toFixed(1)} ms`);
    assert.equal(resumed.status, 410, resumed.text);
    assert.equal((resumed.json() as Answer).error?.data?.reason, 'session-superseded');
    await waitFor(
      async () => (await send(at(0), { body: rpc('tools/list'), headers: sessionHeaders(h) })).status === 404,
      'the owner to end the superseded session',
    );
  });

  /** A request whose response headers have come; `ended` settles when its body ends (the server ended the stream). */
  function openStream(url: URL, headers: Record<string, string>, body?: unknown): Promise<{ status: number; ended: Promise<number> }> {
    return new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const all = { accept: 'application/json, text/event-stream', ...headers, ...(payload ? { 'content-type': 'application/json' } : {}) };
      const req = httpRequest(url, { method: payload ? 'POST' : 'GET', headers: all }, (res) => {
        let bytes = 0;
        const ended = new Promise<number>((done) => {
          res.on('data', (chunk: Buffer) => (bytes += chunk.length));
          res.on('end', () => done(bytes));
          res.on('error', () => done(bytes));
        });
        resolve({ status: res.statusCode ?? 0, ended });
      });
      req.on('error', reject);
      req.end(payload);
    });
  }

  it("lifecycle: a DELETE ends the session's streams on the other replica too", { timeout: 60_000 }, async () => {
    const h = await initialize(at(0));
    const standalone = await openStream(at(1), sessionHeaders(h));
    const call = rpc('tools/call', { name: 'emit', arguments: { count: 100_000, intervalMs: 20 } });
    const tail = await openStream(at(1), sessionHeaders(h), call);
    assert.equal(standalone.status, 200);
    assert.equal(tail.status, 200);
    const started = performance.now();
    const deleted = await send(at(0), { method: 'DELETE', headers: sessionHeaders(h) });
    assert.equal(deleted.status, 200);
    await within(Promise.all([standalone.ended, tail.ended]), "the other replica's streams to end after the DELETE", 10_000);
    console.log(`# streams on the other replica ended ${(performance.now() - started).toFixed(0)} ms after the DELETE`);
  });

  it('priming: a POST answered and a GET opened on the other replica start with a priming event carrying retry:', { timeout: 60_000 }, async () => {
    const h = await initialize(at(0));
    const post = await send(at(1), { body: rpc('tools/call', { name: 'emit', arguments: { count: 2 } }), headers: sessionHeaders(h) });
    assert.equal(post.status, 200);
    assert.equal(post.events[0]?.data, '', 'the first event is the priming event');
    assert.equal(post.retry, 1000, 'with retry:');
    const get = await send(at(1), { headers: sessionHeaders(h), timeoutMs: 5_000, cutWhen: () => true });
    assert.equal(get.status, 200);
    assert.equal(get.events[0]?.data, '', 'a standalone GET starts with its priming event');
    assert.ok(get.events[0]?.id, 'a priming event has an ID to resume from');
    assert.equal(get.retry, 1000);
  });
});
