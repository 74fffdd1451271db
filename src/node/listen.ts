/** Serve an endpoint on `node:http`. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isLoopbackHost, loopbackGuard, type CloseOptions, type Endpoint } from '../server/index.js';
import { serveNode } from './adapter.js';
import { contextOf, type RequestIdentity } from './identity.js';
import { upgradeHandler } from './websocket.js';
import { trackConnections } from './connections.js';

/** Options of {@link nodeHandler}. */
export interface NodeHandlerOptions extends RequestIdentity {
  /** Path the endpoint answers on (default `/mcp`); others get 404. */
  path?: string | undefined;
}

/** Options of {@link listen}. */
export interface ListenOptions extends NodeHandlerOptions {
  /** Port (default 3000; 0 picks a free one). */
  port?: number | undefined;
  /** Bind address (default `127.0.0.1`). Loopback binds get Host/Origin validation. */
  host?: string | undefined;
  /**
   * Largest WebSocket frame accepted from a client after an upgrade, bytes (default
   * 4 MiB). A larger frame closes the socket with 1009 (message too big); the client
   * then re-initializes, as for any lost upgraded session.
   */
  maxFrameBytes?: number | undefined;
}

/** A running listener. */
export interface Listener {
  readonly server: Server;
  readonly port: number;
  /** `http://host:port/path` */
  readonly url: URL;
  /**
   * Stops listening at once, then closes the endpoint. With `drainMs`, the endpoint drains
   * first (see `Endpoint.close`) while the connections already open are served (each
   * closes after its next answer), and they get the rest of the window to close; answers
   * being written are let finish before the rest are closed.
   */
  close(options?: CloseOptions): Promise<void>;
}

/**
 * A `node:http` request handler for `endpoint`, for use in an existing server.
 *
 * @example
 * ```ts
 * const server = createServer(nodeHandler(endpoint, { principal: (req) => userOf(req) }));
 * ```
 */
export function nodeHandler(endpoint: Endpoint, options: NodeHandlerOptions | string = {}): (req: IncomingMessage, res: ServerResponse) => void {
  const { path = '/mcp', ...identity } = typeof options === 'string' ? { path: options } : options;
  const context = contextOf(identity);
  return (req, res) => {
    const pathname = (req.url ?? '/').split('?')[0];
    if (pathname !== path) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
      return;
    }
    void serveNode(endpoint, req, res, context);
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
  const server = createServer(nodeHandler(endpoint, options));
  const connections = trackConnections(server);
  // WebSocket handshakes (the opt-in upgrade); the endpoint refuses them unless enabled.
  server.on('upgrade', upgradeHandler(endpoint, { ...options, path }));
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
    async close(closeOptions) {
      const deadline = Date.now() + (closeOptions?.drainMs ?? 0);
      // First out of rotation: new connections are refused, so a proxy sends the next
      // request elsewhere instead of to a process going away.
      connections.stop();
      await endpoint.close(closeOptions);
      // Within the drain's window, the connections left close after their next answer, or
      // when their clients let them go: closing an idle one could cut a request on its way.
      await connections.gone(deadline);
      await connections.close();
    },
  };
}
