/**
 * A tiny switchable reverse proxy (plain `node:http`) in front of several replicas: a
 * `route` function picks the replica of each request — a load balancer that may send a
 * resume somewhere else than the stream it resumes (seed 000's "silent downgrade to
 * replay-from-zero"). An upstream response that ends abruptly (its socket destroyed) is
 * passed on as an abrupt end of the client's response, so a cut stays a cut.
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import { listenTracked } from './net.js';

export interface RoutedRequest {
  method: string;
  lastEventId: string | undefined;
  target: string;
}

export interface SwitchProxy {
  readonly url: URL;
  readonly routed: RoutedRequest[];
  /** Change the routing policy. */
  route: (req: http.IncomingMessage) => string;
  close(): Promise<void>;
}

// Hop-by-hop headers are the proxy's own business on each side.
const HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'proxy-connection', 'upgrade', 'te', 'trailer']);

export async function startSwitchProxy(targets: Record<string, URL>, route: (req: http.IncomingMessage) => string): Promise<SwitchProxy> {
  const sockets = new Set<Socket>();
  const agent = new http.Agent({ keepAlive: false });
  const routed: RoutedRequest[] = [];
  const proxy: SwitchProxy = {
    url: new URL('http://127.0.0.1/'),
    routed,
    route,
    async close() {
      for (const socket of sockets) socket.destroy();
      agent.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = http.createServer((req, res) => {
    const name = proxy.route(req);
    const target = targets[name];
    const lastEventId = req.headers['last-event-id'];
    routed.push({ method: req.method ?? '', lastEventId: typeof lastEventId === 'string' ? lastEventId : undefined, target: name });
    if (target === undefined) {
      res.writeHead(502).end(`no replica ${name}`);
      return;
    }
    const headers: http.OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(req.headers)) if (!HOP.has(k) && v !== undefined) headers[k] = v;
    headers.host = target.host;
    const upstream = http.request({ host: target.hostname, port: Number(target.port), method: req.method, path: target.pathname, headers, agent }, (up) => {
      const out: http.OutgoingHttpHeaders = {};
      for (const [k, v] of Object.entries(up.headers)) if (!HOP.has(k) && v !== undefined) out[k] = v;
      res.writeHead(up.statusCode ?? 502, out);
      res.flushHeaders();
      up.on('data', (chunk: Buffer) => res.write(chunk));
      up.on('end', () => res.end());
      // An upstream cut (socket destroyed before the body ended) becomes a client-side cut.
      up.on('close', () => {
        if (!up.complete) res.destroy();
      });
      up.on('error', () => res.destroy());
    });
    upstream.on('error', () => res.destroy());
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  proxy.url.port = String(await listenTracked(server, sockets));
  proxy.url.pathname = '/mcp';
  return proxy;
}
