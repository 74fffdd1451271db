/** The real servers of the probe's report card, each started on a free loopback port. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../test/helpers/processes.js';

export interface Running {
  url: URL;
  stop(): Promise<void>;
}
export interface Subject {
  name: string;
  how: string;
  start(): Promise<Running>;
}

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const require = createRequire(import.meta.url);

async function child(cmd: string[], env: Record<string, string>, ready: RegExp, stream: 'stdout' | 'stderr', url: (line: string) => URL): Promise<Running> {
  const c: ChildProcess = spawn(process.execPath, cmd, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: c[stream] as NodeJS.ReadableStream }).on('line', (l) => ready.test(l) && resolve(l));
    c.once('exit', (code) => reject(new Error(`${cmd.join(' ')} exited with ${code}`)));
  });
  return {
    url: url(line),
    stop: async () => {
      if (c.exitCode !== null) return;
      const gone = new Promise((r) => c.once('exit', r));
      c.kill('SIGKILL');
      await gone;
    },
  };
}

const ours =
  (store: string): Subject['start'] =>
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcpc-card-'));
    const spec = store === 'sqlite' ? `sqlite:${join(dir, 'card.db')}` : store;
    const running = await child(
      [join(ROOT, 'dist/cli/main.js'), 'serve', '--port', '0', '--store', spec, '--quiet'],
      {},
      /^http/,
      'stdout',
      (l) => new URL(l.trim()),
    );
    return { url: running.url, stop: async () => (await running.stop(), rmSync(dir, { recursive: true, force: true })) };
  };

const sdkExample = async (): Promise<Running> => {
  const port = await freePort();
  const entry = fileURLToPath(import.meta.resolve('@modelcontextprotocol/sdk/examples/server/simpleStreamableHttp.js'));
  return child([entry], { MCP_PORT: String(port) }, /listening/, 'stdout', () => new URL(`http://127.0.0.1:${port}/mcp`));
};

const sdkTransport = (eventStore: boolean) => async (): Promise<Running> => {
  const { startReferenceServer } = await import('../../src/cli/demo/sdk-server.js');
  const s = await startReferenceServer({ eventStore });
  return { url: s.url, stop: () => s.close() };
};

const v2Handler = (legacy: 'reject' | 'stateless') => async (): Promise<Running> => {
  const { createMcpHandler } = await import('@modelcontextprotocol/server');
  const { createV2Server } = await import('../../test/helpers/v2-server.js');
  const handler = createMcpHandler(() => createV2Server(), { legacy });
  const server = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const answer = await handler.fetch(
        new Request(`http://${req.headers.host ?? '127.0.0.1'}${req.url ?? '/'}`, {
          method: req.method ?? 'GET',
          headers: req.headers as Record<string, string>,
          body: req.method === 'POST' ? Buffer.concat(chunks) : null,
        }),
      );
      const head: Record<string, string> = {};
      answer.headers.forEach((v, k) => (head[k] = v));
      res.writeHead(answer.status, head).end(Buffer.from(await answer.arrayBuffer()));
    })().catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: new URL(`http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`),
    stop: async () => (server.closeAllConnections(), await new Promise<void>((r) => server.close(() => r()))),
  };
};

const dual = async (): Promise<Running> => {
  const { startDualEraServer } = await import('../../test/helpers/dual-era-server.js');
  const s = await startDualEraServer();
  return { url: s.url, stop: () => s.close() };
};

const everything = async (): Promise<Running> => {
  const port = await freePort();
  const entry = join(dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'index.js');
  return child([entry, 'streamableHttp'], { PORT: String(port) }, /listening on port/i, 'stderr', () => new URL(`http://127.0.0.1:${port}/mcp`));
};

const fastmcp = async (): Promise<Running> => {
  const { FastMCP } = await import('fastmcp');
  const { z } = await import('zod');
  const server = new FastMCP({ name: 'fastmcp-card', version: '1.0.0', logger: { debug() {}, error() {}, info() {}, log() {}, warn() {} } });
  server.addTool({
    name: 'emit',
    parameters: z.object({ count: z.number().int().min(0), intervalMs: z.number().int().min(0) }),
    execute: async ({ count, intervalMs }, { reportProgress }) => {
      for (let i = 1; i <= count; i++) {
        await reportProgress({ progress: i, total: count });
        if (intervalMs > 0) await new Promise((r) => setTimeout(r, intervalMs));
      }
      return `emitted ${count}`;
    },
  });
  const port = await freePort();
  await server.start({ transportType: 'httpStream', httpStream: { port, host: '127.0.0.1' } });
  return { url: new URL(`http://127.0.0.1:${port}/mcp`), stop: () => server.stop() };
};

/** Every server of the card, in the order of the table. */
export const SUBJECTS: Subject[] = [
  { name: 'mcp-continuity `serve`, memory store', how: 'serve --store memory', start: ours('memory') },
  { name: 'mcp-continuity `serve`, SQLite store', how: 'serve --store sqlite:FILE', start: ours('sqlite') },
  { name: 'mcp-continuity `serve`, Redis store', how: 'serve --store redis://127.0.0.1:6379', start: ours('redis://127.0.0.1:6379') },
  { name: 'SDK v1 example `simpleStreamableHttp` (InMemoryEventStore)', how: 'examples/server/simpleStreamableHttp.js', start: sdkExample },
  {
    name: 'SDK v1 transport with its InMemoryEventStore',
    how: 'StreamableHTTPServerTransport + examples InMemoryEventStore, our example tools',
    start: sdkTransport(true),
  },
  { name: 'SDK v1 transport without an event store', how: 'StreamableHTTPServerTransport, no eventStore, our example tools', start: sdkTransport(false) },
  { name: 'SDK v2 `createMcpHandler`, `legacy: reject`', how: '@modelcontextprotocol/server, modern only', start: v2Handler('reject') },
  { name: 'SDK v2 `createMcpHandler` (default stateless legacy fallback)', how: '@modelcontextprotocol/server', start: v2Handler('stateless') },
  {
    name: 'dual era: SDK v2 `isLegacyRequest` routing, our endpoint as the 2025-era leg',
    how: 'createMcpHandler legacy: reject + createEndpoint',
    start: dual,
  },
  { name: '@modelcontextprotocol/server-everything', how: 'dist/index.js streamableHttp', start: everything },
  { name: 'fastmcp (httpStream, default event store)', how: 'FastMCP.start httpStream', start: fastmcp },
];
