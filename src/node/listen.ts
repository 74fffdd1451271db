/** Serve an endpoint on `node:http`. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Endpoint } from '../server/endpoint.js';
import { isLoopbackHost, loopbackGuard } from '../server/host-guard.js';
import { toRequest, writeResponse } from './adapter.js';
import { upgradeHandler } from './websocket.js';

/** Options of {@link listen}. */
export interface ListenOptions {
  /** Port (default 3000; 0 picks a free one). */
  port?: number;
  /** Bind address (default `127.0.0.1`). Loopback binds get Host/Origin validation. */
  host?: string;
  /** Path the endpoint answers on (default `/mcp`); others get 404. */
  path?: string;
  /** Largest WebSocket frame accepted after an upgrade, bytes (default 4 MiB). */
  maxFrameBytes?: number;
}

/** A running listener. */
export interface Listener {
  readonly server: Server;
  readonly port: number;
  /** `http://host:port/path` */
  readonly url: URL;
  /** Stops listening and closes the endpoint's live connections. */
  close(): Promise<void>;
}

/** A `node:http` request handler for `endpoint`, for use in an existing server. */
export function nodeHandler(endpoint: Endpoint, path = '/mcp'): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const pathname = (req.url ?? '/').split('?')[0];
    if (pathname !== path) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
      return;
    }
    void endpoint
      .handle(toRequest(req, res))
      .then((response) => writeResponse(res, response))
      .catch(() => res.destroy());
  };
}

/**
 * Listens on `node:http`.
 *
 * @example
 * ```ts
 * const listener = await listen(endpoint, { port: 3000 });
 * console.log(`MCP endpoint at ${listener.url}`);
 * ```
 */
export async function listen(endpoint: Endpoint, options: ListenOptions = {}): Promise<Listener> {
  const host = options.host ?? '127.0.0.1';
  const path = options.path ?? '/mcp';
  const server = createServer(nodeHandler(endpoint, path));
  // WebSocket handshakes (the opt-in upgrade); the endpoint refuses them unless enabled.
  server.on('upgrade', upgradeHandler(endpoint, path, options.maxFrameBytes ?? 4 * 1024 * 1024));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 3000, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  if (isLoopbackHost(host)) endpoint.defaultHostGuard(loopbackGuard(port, host));
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    server,
    port,
    url: new URL(`http://${urlHost}:${port}${path}`),
    async close() {
      await endpoint.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
