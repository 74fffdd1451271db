/**
 * The reference stack the demo compares against: the official SDK v1 server transport with
 * the SDK's own example event store (`InMemoryEventStore`, also what popular proxies ship),
 * serving the same example tools, in this process.
 */
import { Header } from '../../protocol/headers.js';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { InMemoryEventStore } from '@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js';
import { createExampleServer } from '../../example/index.js';

/** A running reference server. */
export interface ReferenceServer {
  url: URL;
  close(): Promise<void>;
}

async function body(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? (JSON.parse(text) as unknown) : undefined;
}

/** Starts the SDK's transport + InMemoryEventStore (or, `eventStore: false`, none) on a free loopback port. */
export async function startReferenceServer(options: { eventStore?: boolean } = {}): Promise<ReferenceServer> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const server: Server = createServer((req, res) => {
    void (async () => {
      const id = req.headers[Header.SessionId];
      const existing = typeof id === 'string' ? sessions.get(id) : undefined;
      if (existing) return existing.handleRequest(req, res, req.method === 'POST' ? await body(req) : undefined);
      if (typeof id === 'string') {
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
        return;
      }
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        ...(options.eventStore === false ? {} : { eventStore: new InMemoryEventStore() }),
        onsessioninitialized: (sid) => void sessions.set(sid, transport),
      });
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId);
      };
      await createExampleServer().connect(transport);
      await transport.handleRequest(req, res, await body(req));
    })().catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    async close() {
      for (const t of sessions.values()) await t.close().catch(() => undefined);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
