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

export async function startChaosProxy(options: ProxyOptions): Promise<ChaosProxy> {
  let plan: (index: number) => ConnectionPlan = options.plan ?? (() => ({}));
  let connections = 0;
  let cuts = 0;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const index = connections++;
    const p = plan(index);
    const target = p.upstream ?? options.upstream;
    const upstream = connect(target.port, target.host);
    sockets.add(client);
    sockets.add(upstream);
    client.on('close', () => sockets.delete(client));
    upstream.on('close', () => sockets.delete(upstream));
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.pipe(upstream);
    let forwarded = 0;
    let cut = false;
    let armed = p.after === undefined;
    let seen = '';
    upstream.on('data', (chunk: Buffer) => {
      if (cut) return;
      if (!armed && p.after !== undefined) {
        // Look for the marker across chunk boundaries; count from where it starts.
        seen = (seen + chunk.toString('latin1')).slice(-(chunk.length + p.after.length));
        const at = seen.indexOf(p.after);
        if (at >= 0) {
          armed = true;
          // Bytes of this chunk before the marker do not count toward the cut.
          const markerInChunk = at - (seen.length - chunk.length);
          forwarded = -Math.max(markerInChunk, 0);
        } else {
          if (!client.write(chunk)) upstream.pause();
          return;
        }
      }
      const limit = p.cutAfterBytes;
      if (limit === undefined || forwarded + chunk.length < limit) {
        forwarded += chunk.length;
        if (!client.write(chunk)) upstream.pause();
        return;
      }
      cut = true;
      cuts++;
      const head = chunk.subarray(0, limit - forwarded);
      forwarded = limit;
      if (p.mode === 'stall') {
        client.write(head);
        upstream.pause();
        return;
      }
      if (p.mode === 'rst') {
        // Write what fits, then reset once it is flushed: the client sees a partial event and ECONNRESET.
        client.write(head, () => client.resetAndDestroy());
      } else {
        client.end(head);
      }
      upstream.destroy();
    });
    client.on('drain', () => upstream.resume());
    upstream.on('end', () => {
      if (!cut) client.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
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
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
