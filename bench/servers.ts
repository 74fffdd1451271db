/**
 * The contenders that are not mcp-continuity: the official SDK v1 transport (bare, and
 * with its example event store), a bare `node:http` SSE writer (one write per event, and
 * 64 KiB writes), and the protocol ceiling: the SDK `McpServer` over a transport that does
 * nothing but frame messages as SSE into the response (the most any server on the SDK can do).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { benchServer, notificationParams, padFor } from './workload.js';

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
}

/** The SDK v1 `StreamableHTTPServerTransport`, one per session, default options. */
export function sdkServer(withStore: boolean): Server {
  const transports = new Map<string, StreamableHTTPServerTransport>();
  return createServer((req, res) => {
    void (async () => {
      const body = req.method === 'POST' ? await readBody(req) : undefined;
      const id = req.headers['mcp-session-id'] as string | undefined;
      let transport = id ? transports.get(id) : undefined;
      if (!transport) {
        const t: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (sid) => void transports.set(sid, t),
          ...(withStore ? { eventStore: new InMemoryEventStore() } : {}),
        });
        t.onclose = () => {
          if (t.sessionId) transports.delete(t.sessionId);
        };
        await benchServer().connect(t);
        transport = t;
      }
      await transport.handleRequest(req, res, body);
    })().catch(() => res.destroy());
  });
}

const FAKE_CHAIN = 'AAAAAAAAAAAAAAAA';

function frame(id: string, data: string): string {
  return `id: ${id}\ndata: ${data}\n\n`;
}

/** Writes `text`; resolves at once unless the socket buffer is full, then at `drain`. */
function write(res: ServerResponse, text: string): Promise<void> | undefined {
  if (res.write(text)) return undefined;
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/**
 * The floor: the same notification frames (serialized per event) written straight to the
 * socket, honouring its backpressure. `batchBytes` 0: one write per event.
 */
export function bareServer(batchBytes: number): Server {
  let sessions = 0;
  return createServer((req, res) => {
    void (async () => {
      if (req.method === 'DELETE') return void res.writeHead(200).end();
      const body = (await readBody(req)) as { id?: number; method?: string; params?: { arguments?: { count: number; size: number } } };
      if (body.method === 'initialize') {
        res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': `bare${++sessions}` });
        return void res.end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: body.id,
            result: { protocolVersion: '2025-06-18', capabilities: {}, serverInfo: { name: 'bare', version: '1' } },
          }),
        );
      }
      if (body.id === undefined) return void res.writeHead(202).end();
      const { count, size } = body.params?.arguments ?? { count: 0, size: 100 };
      const pad = padFor(size);
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      let out = '';
      for (let i = 1; i <= count; i++) {
        const data = JSON.stringify({ method: 'notifications/message', params: notificationParams(pad), jsonrpc: '2.0' });
        const f = frame(`bare.0.${i}.${FAKE_CHAIN}`, data);
        if (batchBytes === 0) {
          const wait = write(res, f);
          if (wait) await wait;
          continue;
        }
        out += f;
        if (out.length >= batchBytes) {
          const wait = write(res, out);
          out = '';
          if (wait) await wait;
        }
      }
      res.end(out + frame(`bare.0.${count + 1}.${FAKE_CHAIN}`, JSON.stringify({ result: { content: [] }, jsonrpc: '2.0', id: body.id })));
    })().catch(() => res.destroy());
  });
}

/** A transport that frames every message as SSE into the POST's response, batching writes like the bare writer. */
class NullTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  #res: ServerResponse | undefined;
  #requestId: unknown;
  #out = '';
  #seq = 0;
  #scheduled = false;
  #json: ((m: JSONRPCMessage) => void) | undefined;

  async start(): Promise<void> {}
  async close(): Promise<void> {}

  /** Hands a request to the server; its answer and related messages go to `res`. */
  request(message: JSONRPCMessage & { id: unknown }, res: ServerResponse, asJson: boolean): void {
    if (asJson) {
      this.#json = (m) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(m));
    } else {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      this.#res = res;
      this.#requestId = message.id;
    }
    this.onmessage?.(message);
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.#json) {
      const reply = this.#json;
      this.#json = undefined;
      reply(message);
      return Promise.resolve();
    }
    const res = this.#res;
    if (!res) return Promise.resolve();
    this.#out += frame(`ceil.0.${++this.#seq}.${FAKE_CHAIN}`, JSON.stringify(message));
    if ('id' in message && message.id === this.#requestId) {
      res.end(this.#out);
      this.#out = '';
      this.#res = undefined;
      return Promise.resolve();
    }
    if (this.#out.length >= 64 * 1024) {
      const wait = write(res, this.#out);
      this.#out = '';
      return wait ?? Promise.resolve();
    }
    if (!this.#scheduled) {
      // Like a real transport, partial batches leave on the next turn.
      this.#scheduled = true;
      setImmediate(() => {
        this.#scheduled = false;
        if (this.#out && this.#res) {
          this.#res.write(this.#out);
          this.#out = '';
        }
      });
    }
    return Promise.resolve();
  }
}

/** The protocol ceiling: `McpServer` (the SDK's per-message work) over {@link NullTransport}. */
export function ceilingServer(): Server {
  const sessions = new Map<string, NullTransport>();
  let n = 0;
  return createServer((req, res) => {
    void (async () => {
      const id = req.headers['mcp-session-id'] as string | undefined;
      if (req.method === 'DELETE') {
        if (id) sessions.delete(id);
        return void res.writeHead(200).end();
      }
      const body = (await readBody(req)) as JSONRPCMessage & { id?: unknown; method?: string };
      let t = id ? sessions.get(id) : undefined;
      if (!t) {
        t = new NullTransport();
        await benchServer().connect(t);
        const sid = `ceiling${++n}`;
        sessions.set(sid, t);
        res.setHeader('mcp-session-id', sid);
      }
      if (body.id === undefined) {
        t.onmessage?.(body);
        return void res.writeHead(202).end();
      }
      t.request(body as JSONRPCMessage & { id: unknown }, res, body.method === 'initialize');
    })().catch(() => res.destroy());
  });
}
