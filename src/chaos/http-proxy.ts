/**
 * An HTTP-aware fault-injecting reverse proxy: each request goes to the next target (round
 * robin), with `Host` rewritten to the target's so a loopback server's DNS-rebinding guard
 * accepts it; responses may be cut after N SSE events or N body bytes (FIN, RST or stall),
 * and requests delayed. WebSocket upgrades are forwarded as raw byte pipes. Seeded, so a
 * failing run can be repeated. Loopback only by default: it is a test tool.
 */
import { prng } from './prng.js';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';

/** One injected fault, as reported to {@link HttpChaosOptions.onFault}. */
export interface ChaosFault {
  /** Request number, from 0. */
  request: number;
  target: string;
  kind: 'fin' | 'rst' | 'stall';
  /** Events and body bytes forwarded before the cut. */
  events: number;
  bytes: number;
}

/** Options of {@link startHttpChaosProxy}. */
export interface HttpChaosOptions {
  /** Where to forward; requests rotate through them in order (round robin, per request). */
  targets: (URL | string)[];
  /** Cut a response after this many SSE events (counted by their blank-line terminator). */
  cutAfterEvents?: number | undefined;
  /** Cut a response after this many body bytes. */
  cutAfterBytes?: number | undefined;
  /** How to cut: `fin` ends the response, `rst` resets the socket, `stall` stops forwarding (default `fin`). */
  mode?: 'fin' | 'rst' | 'stall' | undefined;
  /** Fraction of responses to cut, drawn from the seeded generator (default 1: every one). */
  cutProbability?: number | undefined;
  /** Seed of the generator (default 1). */
  seed?: number | undefined;
  /** Delay before forwarding each request, ms (default 0). */
  delayMs?: number | undefined;
  /** Called for every fault injected. */
  onFault?: ((fault: ChaosFault) => void) | undefined;
  host?: string | undefined;
  port?: number | undefined;
}

/** A running proxy. */
export interface HttpChaosProxy {
  /** `http://host:port` of the proxy; append the target's path. */
  readonly url: URL;
  readonly port: number;
  /** Requests forwarded so far. */
  readonly requests: number;
  /** Faults injected so far. */
  readonly faults: readonly ChaosFault[];
  /** Change faults mid-run (targets stay). */
  configure(change: Pick<HttpChaosOptions, 'cutAfterEvents' | 'cutAfterBytes' | 'mode' | 'cutProbability' | 'delayMs'>): void;
  close(): Promise<void>;
}


/**
 * Starts the proxy.
 *
 * @example
 * ```ts
 * const proxy = await startHttpChaosProxy({ targets: ['http://127.0.0.1:3000'], cutAfterEvents: 5, mode: 'rst' });
 * // point a client at new URL('/mcp', proxy.url); every SSE response is reset after 5 events
 * ```
 */
export async function startHttpChaosProxy(options: HttpChaosOptions): Promise<HttpChaosProxy> {
  const targets = options.targets.map((t) => new URL(t));
  if (targets.length === 0) throw new RangeError('startHttpChaosProxy: at least one target is required');
  const settings = { ...options };
  const random = prng(options.seed ?? 1);
  const faults: ChaosFault[] = [];
  const sockets = new Set<Socket>();
  let requests = 0;

  const pick = (): { index: number; target: URL } => {
    const index = requests++;
    return { index, target: targets[index % targets.length] as URL };
  };

  const forward = (req: IncomingMessage, res: ServerResponse): void => {
    const { index, target } = pick();
    const cutThis = (settings.cutAfterEvents !== undefined || settings.cutAfterBytes !== undefined) && random() < (settings.cutProbability ?? 1);
    const go = (): void => {
      const upstream = httpRequest(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host } },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.statusMessage, up.headers);
          let events = 0;
          let bytes = 0;
          let tail = '';
          let cut = false;
          up.on('data', (chunk: Buffer) => {
            if (cut) return;
            let end = chunk.length;
            if (cutThis && settings.cutAfterBytes !== undefined && bytes + end >= settings.cutAfterBytes) end = settings.cutAfterBytes - bytes;
            if (cutThis && settings.cutAfterEvents !== undefined) {
              // Find the Nth event terminator (a blank line) in this chunk, across chunk boundaries.
              const text = tail + chunk.toString('latin1');
              let from = 0;
              for (;;) {
                const at = text.indexOf('\n\n', from);
                if (at < 0) break;
                const inChunk = at + 2 - tail.length;
                if (inChunk > end) break;
                events++;
                from = at + 2;
                if (events >= settings.cutAfterEvents) {
                  end = Math.max(0, inChunk);
                  break;
                }
              }
              tail = text.slice(-1);
            }
            const reached = end < chunk.length || (cutThis && settings.cutAfterEvents !== undefined && events >= settings.cutAfterEvents) || (cutThis && settings.cutAfterBytes !== undefined && bytes + end >= settings.cutAfterBytes);
            if (!reached) {
              bytes += chunk.length;
              if (!res.write(chunk)) up.pause();
              return;
            }
            cut = true;
            bytes += end;
            const kind = settings.mode ?? 'fin';
            faults.push({ request: index, target: target.host, kind, events, bytes });
            settings.onFault?.(faults[faults.length - 1] as ChaosFault);
            const head = chunk.subarray(0, end);
            if (kind === 'stall') {
              res.write(head);
              up.pause();
              return;
            }
            upstream.destroy();
            if (kind === 'rst') res.write(head, () => res.socket?.resetAndDestroy());
            else res.end(head);
          });
          res.on('drain', () => up.resume());
          up.on('end', () => {
            if (!cut) res.end();
          });
          up.on('error', () => res.destroy());
        },
      );
      upstream.on('error', () => {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end(`chaos proxy: ${target.host} unreachable`);
        else res.destroy();
      });
      res.on('close', () => upstream.destroy());
      req.pipe(upstream);
    };
    if (settings.delayMs) setTimeout(go, settings.delayMs);
    else go();
  };

  const server: Server = createServer(forward);
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  // WebSocket (and any other) upgrades: replay the head with Host rewritten, then pipe raw bytes.
  server.on('upgrade', (req: IncomingMessage, client: Socket, head: Buffer) => {
    const { target } = pick();
    const upstream = connect(Number(target.port || 80), target.hostname, () => {
      const lines = [`${req.method} ${req.url} HTTP/1.1`];
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        const name = req.rawHeaders[i] as string;
        lines.push(`${name}: ${name.toLowerCase() === 'host' ? target.host : req.rawHeaders[i + 1]}`);
      }
      upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (head.length > 0) upstream.write(head);
      client.pipe(upstream).pipe(client);
    });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = options.host ?? '127.0.0.1';
  return {
    url: new URL(`http://${host.includes(':') ? `[${host}]` : host}:${port}`),
    port,
    get requests() {
      return requests;
    },
    faults,
    configure(change) {
      Object.assign(settings, change);
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
