/**
 * A hostile Streamable HTTP server for the client: just enough MCP for the SDK `Client`
 * to connect (initialize, notifications, ping), and a GET stream that misbehaves on
 * purpose: a huge event, `retry: 0` floods, flapping session ids or epochs, decreasing
 * ids, redirects, streams without ids. Real sockets, no mocks.
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import { listenTracked, readBody } from '../helpers/faulty/net.js';

export type Behaviour =
  /** The GET sends one `data:` line of `hugeBytes` bytes, then a normal keep-open stream. */
  | 'huge-event'
  /** Every GET: `retry: 0`, then the response ends at once (no events, no ids). */
  | 'retry-zero'
  /** Every GET answers for another session id than the one initialized. */
  | 'flapping-session'
  /** Every GET answers with another replay epoch than initialize did. */
  | 'flapping-epoch'
  /** Every GET sends integer ids that go down (5, 4). */
  | 'decreasing-ids'
  /** Every GET is redirected (307) to itself. */
  | 'redirect-loop'
  /** Every GET sends events without ids, then ends. */
  | 'no-ids';

export interface HostileServer {
  url: URL;
  gets: number;
  initializes: number;
  posts: number;
  close(): Promise<void>;
}

export async function startHostileServer(behaviour: Behaviour, options: { hugeBytes?: number } = {}): Promise<HostileServer> {
  const sockets = new Set<Socket>();
  let session = '';
  const state: HostileServer = { url: new URL('http://127.0.0.1/'), gets: 0, initializes: 0, posts: 0, close: async () => {} };
  const server = http.createServer((req, res) => {
    if (req.method === 'POST') return void post(req, res);
    if (req.method === 'GET') return get(req, res);
    res.writeHead(405).end();
  });

  async function post(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    state.posts++;
    const message = JSON.parse(await readBody(req)) as { id?: unknown; method?: string; params?: { protocolVersion?: string } };
    if (message.method === 'initialize') {
      state.initializes++;
      session = `hostile-${state.initializes}`;
      const result = {
        protocolVersion: message.params?.protocolVersion ?? '2025-06-18',
        capabilities: { logging: {} },
        serverInfo: { name: 'hostile', version: '0' },
      };
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': session, 'x-mcp-replay-epoch': `epoch-${state.initializes}` });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
      return;
    }
    if (message.id === undefined) return void res.writeHead(202).end();
    res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': session });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: {} }));
  }

  function get(req: http.IncomingMessage, res: http.ServerResponse): void {
    state.gets++;
    const sse = (headers: Record<string, string> = {}): void => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': session, 'x-mcp-replay-epoch': `epoch-${state.initializes}`, ...headers });
    };
    switch (behaviour) {
      case 'huge-event': {
        sse();
        if (state.gets > 1) return void res.write(': quiet\n\n');
        // Streamed with backpressure from one reused chunk: the server holds almost nothing.
        const chunk = Buffer.alloc(64 * 1024, 'x');
        let left = options.hugeBytes ?? 200 * 1024 * 1024;
        res.write('id: 1\ndata: ');
        const pump = (): void => {
          while (left > 0) {
            left -= chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.write('\n\n');
        };
        res.on('error', () => {});
        return pump();
      }
      case 'retry-zero':
        sse();
        return void res.end('retry: 0\n\n');
      case 'flapping-session':
        sse({ 'mcp-session-id': `${session}-other` });
        return void res.write(': hello\n\n');
      case 'flapping-epoch':
        sse({ 'x-mcp-replay-epoch': `epoch-other-${state.gets}` });
        return void res.write(': hello\n\n');
      case 'decreasing-ids':
        sse();
        return void res.write(
          'id: 5\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":5}}\n\n' +
            'id: 4\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":4}}\n\n',
        );
      case 'redirect-loop':
        return void res.writeHead(307, { location: req.url ?? '/mcp' }).end();
      case 'no-ids':
        sse();
        return void res.end('data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"no-id"}}\n\n');
    }
  }

  const port = await listenTracked(server, sockets);
  state.url = new URL(`http://127.0.0.1:${port}/mcp`);
  state.close = async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return state;
}
