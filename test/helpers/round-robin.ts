/**
 * An HTTP proxy that sends each request to the next of several upstreams in turn (so each
 * reconnect of a client lands on another replica), streaming both ways. It rewrites Host
 * to the upstream's, as a load balancer does, so the replicas' loopback Host guard holds.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface RoundRobin {
  readonly url: URL;
  /** Requests forwarded so far, per upstream index. */
  readonly counts: number[];
  /** The next request goes to upstream `index`. */
  rotateTo(index: number): void;
  /** Replaces the upstreams (a replica swap), keeping the rotation going. */
  setUpstreams(upstreams: readonly URL[]): void;
  close(): Promise<void>;
}

/** `preserveHost`: pass the client's Host on (as nginx with `proxy_set_header Host $host`); the replicas must allow it. */
export async function startRoundRobin(upstreams: readonly URL[], path = '/mcp', options: { preserveHost?: boolean } = {}): Promise<RoundRobin> {
  let targets = [...upstreams];
  const counts = targets.map(() => 0);
  let next = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    // Bodies are buffered (they are small JSON-RPC messages), so a request whose replica
    // refuses the connection (killed) goes to the next one, as a load balancer retries.
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => forward(req, res, Buffer.concat(chunks), targets.length));
  });
  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer, triesLeft: number): void => {
    const index = next++ % targets.length;
    const target = targets[index] as URL;
    counts[index] = (counts[index] ?? 0) + 1;
    const headers = options.preserveHost ? req.headers : { ...req.headers, host: target.host };
    const upstream = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      res.flushHeaders();
      up.pipe(res);
      up.on('error', () => res.destroy());
    });
    upstream.on('error', (error: NodeJS.ErrnoException) => {
      if (!res.headersSent && error.code === 'ECONNREFUSED' && triesLeft > 1) return forward(req, res, body, triesLeft - 1);
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
    res.on('close', () => upstream.destroy());
    upstream.end(body);
  };
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}${path}`),
    counts,
    rotateTo(index) {
      next = index;
    },
    setUpstreams(list) {
      targets = [...list];
      while (counts.length < targets.length) counts.push(0);
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
