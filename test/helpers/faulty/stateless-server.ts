/**
 * A 2026-07-28-style stateless server, hand-written on `node:http`: no sessions (no
 * `Mcp-Session-Id`, ever), every POST answered with plain JSON (no SSE), GET answered
 * 405 — no stream to open, nothing to resume. It still answers `initialize` (the SDK v1
 * client sends one) with a revision that client supports.
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import { listenTracked } from './net.js';

export interface StatelessServer {
  readonly url: URL;
  readonly requests: Array<{ method: string; rpc?: string; sessionId?: string; status: number }>;
  toolRuns: number;
  close(): Promise<void>;
}

const SUPPORTED = ['2025-03-26', '2025-06-18', '2025-11-25'];

export async function startStatelessServer(): Promise<StatelessServer> {
  const sockets = new Set<Socket>();
  const state: StatelessServer = {
    url: new URL('http://127.0.0.1/mcp'),
    requests: [],
    toolRuns: 0,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = http.createServer((req, res) => {
    const seen: StatelessServer['requests'][number] = { method: req.method ?? '', status: 0 };
    const sid = req.headers['mcp-session-id'];
    if (typeof sid === 'string') seen.sessionId = sid;
    state.requests.push(seen);
    const json = (status: number, body?: unknown): void => {
      seen.status = status;
      if (body === undefined) res.writeHead(status).end();
      else res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    if (req.method !== 'POST') {
      seen.status = 405;
      res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let message: { id?: string | number; method?: string; params?: Record<string, unknown> };
      try {
        message = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof message;
      } catch {
        return json(400, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
      }
      if (message.method !== undefined) seen.rpc = message.method;
      const id = message.id;
      if (id === undefined || message.method === undefined) return json(202);
      const result = (r: unknown): void => json(200, { jsonrpc: '2.0', id, result: r });
      switch (message.method) {
        case 'initialize': {
          const asked = String(message.params?.protocolVersion ?? '');
          return result({
            protocolVersion: SUPPORTED.includes(asked) ? asked : '2025-06-18',
            capabilities: { tools: {} },
            serverInfo: { name: 'stateless-2026', version: '1.0.0' },
          });
        }
        case 'ping':
          return result({});
        case 'tools/list':
          return result({ tools: [{ name: 'add', inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } } }] });
        case 'tools/call': {
          state.toolRuns++;
          const args = (message.params?.arguments ?? {}) as { a?: number; b?: number };
          return result({ content: [{ type: 'text', text: String((args.a ?? 0) + (args.b ?? 0)) }] });
        }
        default:
          return json(200, { jsonrpc: '2.0', id, error: { code: -32601, message: 'Method not found' } });
      }
    });
  });
  state.url.port = String(await listenTracked(server, sockets));
  return state;
}
