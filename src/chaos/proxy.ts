/**
 * A TCP fault-injection proxy. Each accepted connection is forwarded to an upstream and
 * may be cut after a number of response bytes, by FIN (orderly end) or RST (reset), or
 * stalled (bytes stop flowing, the socket stays open). Used by the tests and by
 * `mcp-continuity chaos`. Loopback only by default: it is a test tool.
 *
 * Two levels: {@link startChaosProxy} works on TCP connections (byte-exact cuts anywhere,
 * including inside HTTP heads and WebSocket frames); {@link startHttpChaosProxy} works on
 * HTTP requests (round robin across replicas, Host rewriting, cuts after N SSE events).
 */
import { createServer, connect, type Server, type Socket, type AddressInfo } from 'node:net';
import { byteCut } from './cut.js';
import { listen } from './listen.js';

export { startHttpChaosProxy, type ChaosFault, type HttpChaosOptions, type HttpChaosProxy } from './http-proxy.js';

/** What to do with one connection. */
export interface ConnectionPlan {
  /** Where to forward (default: the proxy's upstream). */
  upstream?: { host: string; port: number } | undefined;
  /** Cut after this many bytes from upstream have been forwarded to the client. */
  cutAfterBytes?: number | undefined;
  /** How to cut (default 'fin'). 'stall' stops forwarding and leaves both sockets open. */
  mode?: 'fin' | 'rst' | 'stall' | undefined;
  /**
   * Count `cutAfterBytes` only from the first occurrence of this text in the response
   * bytes (say, a marker that appears only inside event data), so cuts land mid-stream.
   */
  after?: string | undefined;
}

export interface ProxyOptions {
  upstream: { host: string; port: number };
  /** Decides each connection's fate; `index` counts connections from 0. */
  plan?: ((index: number) => ConnectionPlan) | undefined;
  host?: string | undefined;
  port?: number | undefined;
}

export interface ChaosProxy {
  readonly port: number;
  readonly server: Server;
  /** Connections accepted so far. */
  readonly connections: number;
  /** Connections cut so far. */
  readonly cuts: number;
  /** Replace the plan (for tests that change faults mid-run). */
  setPlan(plan: (index: number) => ConnectionPlan): void;
  close(): Promise<void>;
}

/** Starts the TCP proxy; each connection follows `options.plan` for its index. */
export async function startChaosProxy(options: ProxyOptions): Promise<ChaosProxy> {
  let plan: (index: number) => ConnectionPlan = options.plan ?? (() => ({}));
  let connections = 0;
  let cuts = 0;
  const server = createServer((client) => {
    const p = plan(connections++);
    forwardConnection(client, p.upstream ?? options.upstream, p, () => cuts++);
  });
  const close = await listen(server, options.host, options.port);
  return {
    port: (server.address() as AddressInfo).port,
    server,
    get connections() {
      return connections;
    },
    get cuts() {
      return cuts;
    },
    setPlan(next) {
      plan = next;
    },
    close,
  };
}

/** Pipes one connection to `target`, cutting the response where the plan says. */
function forwardConnection(client: Socket, target: { host: string; port: number }, p: ConnectionPlan, onCut: () => void): void {
  const upstream = connect(target.port, target.host);
  // Either side going away takes the other with it (closing the proxy closes every client).
  client.on('close', () => upstream.destroy());
  upstream.on('error', () => client.destroy());
  client.on('error', () => upstream.destroy());
  client.pipe(upstream);
  const counter = byteCut(p.cutAfterBytes, p.after);
  let cut = false;
  upstream.on('data', (chunk: Buffer) => {
    if (cut) return;
    const end = counter.feed(chunk);
    if (end === undefined) {
      if (!client.write(chunk)) upstream.pause();
      return;
    }
    cut = true;
    onCut();
    const head = chunk.subarray(0, end);
    if (p.mode === 'stall') {
      client.write(head);
      upstream.pause();
      return;
    }
    // rst: write what fits, then reset once it is flushed: the client sees a partial event and ECONNRESET.
    if (p.mode === 'rst') client.write(head, () => client.resetAndDestroy());
    else client.end(head);
    upstream.destroy();
  });
  client.on('drain', () => upstream.resume());
  upstream.on('end', () => {
    if (!cut) client.end();
  });
}
