/**
 * The official SDK v1 server, not ours: `McpServer` on `StreamableHTTPServerTransport`
 * (stateful, `sessionIdGenerator: randomUUID`), one per session, served by a plain
 * `node:http` server that routes sessions to transports — the SDK's documented pattern —
 * with a small in-test `EventStore` whose IDs are opaque (`<streamId>_<n>`).
 *
 * Tools: `count` (`n` progress notifications, then a result; a cut armed with `cutNext`
 * destroys the POST's socket after `after` of them), `wait` (answers when `release()` is
 * called: a call that stays in flight). `broadcast(k)` sends `k` logging notifications on
 * a session's standalone GET stream; `cutStandalone()` destroys that stream's socket.
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { readBody } from './net.js';

/** In-memory, opaque IDs `<streamId>_<n>`; skips priming events (`{}`) on replay. */
export class OpaqueEventStore implements EventStore {
  readonly events: Array<{ id: string; streamId: string; message: JSONRPCMessage }> = [];
  readonly #counters = new Map<string, number>();

  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const n = (this.#counters.get(streamId) ?? 0) + 1;
    this.#counters.set(streamId, n);
    const id = `${streamId}_${n}`;
    this.events.push({ id, streamId, message });
    return id;
  }

  async getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    return this.events.find((e) => e.id === eventId)?.streamId;
  }

  async replayEventsAfter(lastEventId: string, { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> }): Promise<string> {
    const at = this.events.findIndex((e) => e.id === lastEventId);
    const from = this.events[at];
    if (from === undefined) return '';
    for (const e of this.events.slice(at + 1)) {
      if (e.streamId === from.streamId && Object.keys(e.message).length > 0) await send(e.id, e.message);
    }
    return from.streamId;
  }
}

export interface SdkServer {
  readonly url: URL;
  readonly eventStore: OpaqueEventStore;
  /** Sessions in creation order. */
  readonly sessionIds: string[];
  /** How many times the body of `count` / `wait` ran. */
  readonly toolRuns: { count: number; wait: number };
  /** Requests seen: method, JSON-RPC method, Last-Event-ID, status. */
  readonly requests: Array<{ method: string; rpc?: string; lastEventId?: string; status?: number }>;
  /** The next `count` call's POST socket is destroyed after `after` progress notifications (once `when` resolves). */
  cutNext(after: number, when?: Promise<unknown>): void;
  /** `k` logging notifications on `sessionId`'s standalone stream. */
  broadcast(sessionId: string, k: number): Promise<void>;
  /** Destroys the socket of `sessionId`'s standalone GET stream. */
  cutStandalone(sessionId: string): boolean;
  /** Answers every pending `wait` call. */
  release: () => void;
  close(): Promise<void>;
}

export async function startSdkServer(): Promise<SdkServer> {
  const eventStore = new OpaqueEventStore();
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const servers = new Map<string, McpServer>();
  const standaloneSockets = new Map<string, Socket>();
  const callSockets = new Map<string, Socket>();
  const sockets = new Set<Socket>();
  const toolRuns = { count: 0, wait: 0 };
  const sessionIds: string[] = [];
  const requests: SdkServer['requests'] = [];
  let cut: { after: number; when: Promise<unknown> | undefined } | undefined;
  let waiting: Array<() => void> = [];
  let seq = 0;

  function createMcpServer(): McpServer {
    const mcp = new McpServer({ name: 'sdk-v1-server', version: '1.0.0' }, { capabilities: { logging: {} } });
    mcp.registerTool('count', { inputSchema: { n: z.number().int().min(0) } }, async ({ n }, extra) => {
      toolRuns.count++;
      const plan = cut;
      cut = undefined;
      const token = extra._meta?.progressToken;
      for (let i = 1; i <= n; i++) {
        if (token !== undefined) {
          await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: i, total: n } });
        }
        if (plan !== undefined && i === plan.after) {
          await (plan.when ?? new Promise((r) => setTimeout(r, 30)));
          callSockets.get(`${extra.sessionId ?? ''}:${String(extra.requestId)}`)?.destroy();
          // Let the client reconnect while the tool goes on.
          await new Promise((r) => setTimeout(r, 5));
        } else if (plan !== undefined && i > plan.after) {
          await new Promise((r) => setTimeout(r, 3));
        }
      }
      return { content: [{ type: 'text', text: `counted ${n}` }] };
    });
    mcp.registerTool('wait', { inputSchema: {} }, async () => {
      toolRuns.wait++;
      await new Promise<void>((resolve) => waiting.push(resolve));
      return { content: [{ type: 'text', text: 'released' }] };
    });
    return mcp;
  }

  const server = http.createServer((req, res) => {
    void route(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
      else res.destroy();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  async function route(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const sid = typeof req.headers['mcp-session-id'] === 'string' ? req.headers['mcp-session-id'] : undefined;
    const lastEventId = typeof req.headers['last-event-id'] === 'string' ? req.headers['last-event-id'] : undefined;
    const seen: SdkServer['requests'][number] = { method: req.method ?? '' };
    if (lastEventId !== undefined) seen.lastEventId = lastEventId;
    requests.push(seen);
    res.on('finish', () => {
      seen.status = res.statusCode;
    });
    if (req.method === 'POST') {
      const body = JSON.parse(await readBody(req)) as unknown;
      const method = (body as { method?: unknown }).method;
      if (typeof method === 'string') seen.rpc = method;
      if (method === 'tools/call') callSockets.set(`${sid ?? ''}:${String((body as { id?: unknown }).id)}`, req.socket);
      const existing = sid === undefined ? undefined : transports.get(sid);
      if (existing) return existing.handleRequest(req, res, body);
      if (sid === undefined && isInitializeRequest(body)) {
        const mcp = createMcpServer();
        const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          eventStore,
          onsessioninitialized: (id) => {
            transports.set(id, transport);
            servers.set(id, mcp);
            sessionIds.push(id);
          },
        });
        await mcp.connect(transport);
        return transport.handleRequest(req, res, body);
      }
      res.writeHead(sid === undefined ? 400 : 404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } }));
      return;
    }
    const transport = sid === undefined ? undefined : transports.get(sid);
    if (transport === undefined || sid === undefined) {
      res.writeHead(sid === undefined ? 400 : 404).end();
      return;
    }
    if (req.method === 'GET' && lastEventId === undefined) standaloneSockets.set(sid, req.socket);
    if (req.method === 'GET' && lastEventId?.startsWith('_GET_stream') === true) standaloneSockets.set(sid, req.socket);
    return transport.handleRequest(req, res);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  const url = new URL(`http://127.0.0.1:${address.port}/mcp`);

  return {
    url,
    eventStore,
    sessionIds,
    toolRuns,
    requests,
    cutNext(after, when) {
      cut = { after, when };
    },
    async broadcast(sessionId, k) {
      const mcp = servers.get(sessionId);
      if (mcp === undefined) throw new Error(`no session ${sessionId}`);
      for (let i = 0; i < k; i++) {
        await mcp.server.notification({ method: 'notifications/message', params: { level: 'info', logger: 'broadcast', data: { seq: ++seq, origin: 'sdk' } } });
      }
    },
    cutStandalone(sessionId) {
      const socket = standaloneSockets.get(sessionId);
      socket?.destroy();
      return socket !== undefined;
    },
    release() {
      const w = waiting;
      waiting = [];
      for (const resolve of w) resolve();
    },
    async close() {
      const w = waiting;
      waiting = [];
      for (const resolve of w) resolve();
      for (const t of transports.values()) await t.close().catch(() => {});
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
