/**
 * A front server for outage tests, in front of a real endpoint. It forwards (rewriting Host,
 * as a load balancer does), or stands for an outage: it answers every request `503` with
 * `Retry-After` and a not-accepted reason (`server-draining`, as a draining process does),
 * or holds the requests the test names until it lets them through, or refuses connections
 * (nothing listens on its port, as in a deploy window). Every connection is closed after
 * its response, so no kept-alive socket outlives a refusal. It notes each POST it received.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ContinuityError } from '../../src/protocol/errors.js';

/** A POST the front received. */
export interface Received {
  method: string | undefined;
  /** The JSON-RPC id, or for `notifications/cancelled` the request it names. */
  id: unknown;
  /** Tool call arguments, when it is one. */
  arguments: Record<string, unknown> | undefined;
  /** Was it passed to the endpoint? */
  forwarded: boolean;
}

export interface OutageFront {
  readonly url: URL;
  readonly received: readonly Received[];
  /** `forward`, or `503` with this `Retry-After` value. */
  mode: 'forward' | { retryAfter: string };
  /** Requests held (not answered) while this is true of them, until {@link release}. */
  hold: ((r: Received) => boolean) | undefined;
  /** Forwards every held request. */
  release(): void;
  /** Stops listening: connections are refused. `cut`: the open ones (streams under way) are closed too. */
  refuse(cut?: boolean): Promise<void>;
  /** Listens again, on the same port. */
  reopen(): Promise<void>;
  close(): Promise<void>;
}

function describe(body: Buffer): Omit<Received, 'forwarded'> {
  try {
    const m = JSON.parse(body.toString('utf8')) as { method?: string; id?: unknown; params?: { requestId?: unknown; arguments?: Record<string, unknown> } };
    const id = m.method === 'notifications/cancelled' ? m.params?.requestId : m.id;
    return { method: m.method, id, arguments: m.method === 'tools/call' ? m.params?.arguments : undefined };
  } catch {
    return { method: undefined, id: undefined, arguments: undefined };
  }
}

export async function startOutageFront(upstream: URL): Promise<OutageFront> {
  const received: Received[] = [];
  const held: (() => void)[] = [];
  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer, note: Received | undefined): void => {
    if (note) note.forwarded = true;
    const headers = { ...req.headers, host: upstream.host };
    const up = httpRequest({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers }, (answer) => {
      // Hop by hop: the endpoint's keep-alive is not the front's.
      const { connection: _c, 'keep-alive': _k, ...headers } = answer.headers;
      res.writeHead(answer.statusCode ?? 502, { ...headers, connection: 'close' });
      res.flushHeaders();
      answer.pipe(res);
      answer.on('error', () => res.destroy());
    });
    up.on('error', () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
    res.on('close', () => up.destroy());
    up.end(body);
  };
  const server: Server = createServer((req, res) => {
    res.shouldKeepAlive = false;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const note = req.method === 'POST' ? { ...describe(body), forwarded: false } : undefined;
      if (note) received.push(note);
      if (front.mode !== 'forward') {
        const error = new ContinuityError('server-draining');
        res.writeHead(503, { 'content-type': 'application/json', 'retry-after': front.mode.retryAfter, connection: 'close' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: error.toJsonRpcError() }));
        return;
      }
      if (note && front.hold?.(note)) held.push(() => forward(req, res, body, note));
      else forward(req, res, body, note);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const front: OutageFront = {
    url: new URL(`http://127.0.0.1:${port}${upstream.pathname}`),
    received,
    mode: 'forward',
    hold: undefined,
    release() {
      for (const go of held.splice(0)) go();
    },
    async refuse(cut = false) {
      // Not listening from now on; connections still answering end on their own, unless cut.
      server.close();
      if (cut) server.closeAllConnections();
    },
    reopen: () => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve)),
    async close() {
      front.release();
      server.closeAllConnections();
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return front;
}
