/**
 * The endpoint on another runtime (Bun's `Bun.serve({ fetch })`, `Deno.serve`), from the
 * built package, with the example server; our client (Node) drives it. It serves tools/list
 * and a call with progress; the call's stream is cut mid-way (an HTTP chaos proxy) and
 * resumes with every progress exactly once; an idle standalone stream lives 60 s (four
 * keep-alives at the default 15 s) without a reconnect; the SQLite store names the runtime
 * and the fix. The runtimes come from their npm packages (devDependencies): under CI=true a
 * missing binary fails; elsewhere the tests are skipped loudly.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ContinuityClientTransport, type DivergenceReport } from '../../src/client/index.js';
import { startHttpChaosProxy } from '../../src/chaos/proxy.js';
import { waitFor, within } from '../helpers/wait.js';

export interface Runtime {
  name: 'Bun' | 'Deno';
  /** The binary, from its npm package. */
  binary: string;
  /** Arguments before the script. */
  args: string[];
}

const SCRIPT = fileURLToPath(new URL('server.mjs', import.meta.url));
const STEPS = 20;
const KEEP_ALIVE_MS = 15_000; // the endpoint's default, which the server script keeps
const IDLE_MS = 60_000;

/** Starts the server script; resolves with its first JSON line. */
async function start(rt: Runtime, env: Record<string, string> = {}): Promise<{ child: ChildProcess; line: Record<string, unknown> }> {
  const child = spawn(rt.binary, [...rt.args, SCRIPT], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, DENO_NO_UPDATE_CHECK: '1', DO_NOT_TRACK: '1', ...env },
  });
  const lines = createInterface({ input: child.stdout });
  const first = new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`${rt.name} exited (${code}) before printing its port`)));
  });
  const line = JSON.parse(await within(first, `${rt.name} server start`, 60_000)) as Record<string, unknown>;
  return { child, line };
}

async function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

export function runtimeSuite(rt: Runtime): void {
  const missing = !existsSync(rt.binary);
  if (missing && process.env['CI'] === 'true') {
    it(`${rt.name} is installed (CI)`, () => assert.fail(`${rt.binary} is missing: it comes with the ${rt.name.toLowerCase()} devDependency (npm ci)`));
    return;
  }
  if (missing) console.warn(`\n*** SKIPPING the ${rt.name} tests: ${rt.binary} is missing (npm install) ***\n`);

  describe(`the endpoint on ${rt.name}`, { skip: missing ? `${rt.binary} missing` : false, timeout: 180_000 }, () => {
    let child: ChildProcess | undefined;
    let origin = '';

    before(async () => {
      const started = await start(rt);
      child = started.child;
      assert.equal(typeof started.line.port, 'number', JSON.stringify(started.line));
      origin = `http://127.0.0.1:${started.line.port as number}`;
    });

    after(() => stop(child));

    it('serves tools/list and a call with progress, and resumes a cut call with every progress once', async () => {
      const proxy = await startHttpChaosProxy({ targets: [origin], onFault: () => proxy.configure({ cutAfterEvents: undefined }) });
      const divergences: DivergenceReport[] = [];
      const transport = new ContinuityClientTransport(new URL('/mcp', proxy.url), {
        reconnect: { initialDelayMs: 10, maxDelayMs: 100 },
        onDivergence: (r) => divergences.push(r),
      });
      const client = new Client({ name: `${rt.name}-test`, version: '1.0.0' });
      try {
        await client.connect(transport);
        const tools = (await client.listTools()).tools.map((t) => t.name);
        assert.ok(tools.includes('emit'), tools.join(', '));
        // The call's stream is cut after 10 events (about progress 5), once.
        proxy.configure({ cutAfterEvents: 10, mode: 'fin' });
        const progress: number[] = [];
        const result = await client.callTool({ name: 'emit', arguments: { count: STEPS, intervalMs: 20 } }, undefined, {
          onprogress: (p) => progress.push(p.progress),
          resetTimeoutOnProgress: true,
        });
        assert.equal(proxy.faults.length, 1, 'the call was cut once');
        assert.deepEqual(
          progress,
          Array.from({ length: STEPS }, (_, i) => i + 1),
          'every progress once, in order: the resume continued the stream',
        );
        assert.deepEqual(result.structuredContent, { emitted: STEPS });
        assert.deepEqual(
          divergences.map((d) => d.code),
          [],
        );
      } finally {
        await client.close();
        await proxy.close();
      }
    });

    it(`keeps an idle stream for ${IDLE_MS / 1000} s without a reconnect`, { timeout: IDLE_MS + 60_000 }, async () => {
      let gets = 0;
      let keepAlives = 0;
      /** From the GET's start to its first body bytes, ms: with headers held back until then (Bun), to the headers too. */
      let firstBytesMs: number | undefined;
      const decoder = new TextDecoder();
      const transport = new ContinuityClientTransport(new URL('/mcp', origin), {
        fetch: async (url, init) => {
          const started = performance.now();
          const response = await fetch(url, init);
          if (init.method !== 'GET' || !response.body) return response;
          gets++;
          const counted = response.body.pipeThrough(
            new TransformStream<Uint8Array, Uint8Array>({
              transform(chunk, controller) {
                firstBytesMs ??= performance.now() - started;
                keepAlives += decoder.decode(chunk, { stream: true }).split(': keep-alive').length - 1;
                controller.enqueue(chunk);
              },
            }),
          );
          return new Response(counted, { status: response.status, statusText: response.statusText, headers: response.headers });
        },
      });
      const client = new Client({ name: `${rt.name}-idle`, version: '1.0.0' });
      try {
        await client.connect(transport);
        // The first keep-alive comes at once (headers out), then one every 15 s: five is 60 s idle.
        const wanted = 1 + IDLE_MS / KEEP_ALIVE_MS;
        await waitFor(
          () => keepAlives >= wanted,
          () => `${wanted} keep-alives on the standalone stream (got ${keepAlives}, ${gets} GETs)`,
          IDLE_MS + 30_000,
        );
        assert.equal(gets, 1, 'one GET: the stream was never cut and reconnected');
        // Sent at once, not with the first interval's keep-alive: only a missing first comment misses this.
        assert.ok(firstBytesMs !== undefined && firstBytesMs < KEEP_ALIVE_MS, `first bytes after ${firstBytesMs} ms`);
        assert.deepEqual((await client.callTool({ name: 'emit', arguments: { count: 1 } })).structuredContent, { emitted: 1 });
      } finally {
        await client.close();
      }
    });

    it('the SQLite store fails with a line that names the runtime and the fix', async () => {
      const { child: sqlite, line } = await start(rt, { STORE: 'sqlite', SQLITE_PATH: ':memory:' });
      await stop(sqlite);
      assert.match(
        String(line.sqlite),
        new RegExp(`^sqliteStore: better-sqlite3 does not load on ${rt.name} .*; on ${rt.name} use memoryStore or redisStore, or serve from Node for SQLite$`),
      );
    });
  });
}
