/**
 * An HTTP-aware fault-injecting reverse proxy: each request goes to the next target (round
 * robin), with `Host` rewritten to the target's so a loopback server's DNS-rebinding guard
 * accepts it; responses may be cut after N SSE events or N body bytes (FIN, RST or stall),
 * and requests delayed. WebSocket upgrades are forwarded as raw byte pipes. Seeded, so a
 * failing run can be repeated. Loopback only by default: it is a test tool.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { eventCut, NO_CUT, type CutCounter } from './cut.js';
import { prng } from './prng.js';
import { listen } from './listen.js';

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
  let requests = 0;
  const pick = (): { index: number; target: URL } => {
    const index = requests++;
    return { index, target: targets[index % targets.length] as URL };
  };
  const onFault = (fault: ChaosFault): void => {
    faults.push(fault);
    settings.onFault?.(fault);
  };

  const server: Server = createServer((req, res) => {
    const { index, target } = pick();
    const cutThis = (settings.cutAfterEvents !== undefined || settings.cutAfterBytes !== undefined) && random() < (settings.cutProbability ?? 1);
    const counter = cutThis ? eventCut(settings.cutAfterEvents, settings.cutAfterBytes) : NO_CUT;
    const go = (): void =>
      forwardRequest(
        req,
        res,
        target,
        counter,
        (kind, c) => onFault({ request: index, target: target.host, kind, events: c.events, bytes: c.bytes }),
        settings.mode ?? 'fin',
      );
    if (settings.delayMs) setTimeout(go, settings.delayMs);
    else go();
  });
  server.on('upgrade', (req: IncomingMessage, client: Socket, head: Buffer) => tunnel(req, client, head, pick().target));
  const close = await listen(server, options.host, options.port);
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
    close,
  };
}

type CutKind = ChaosFault['kind'];

/** Forwards one request to `target`, with `Host` rewritten, cutting its response where `counter` says. */
function forwardRequest(
  req: IncomingMessage,
  res: ServerResponse,
  target: URL,
  counter: CutCounter,
  onCut: (kind: CutKind, counter: CutCounter) => void,
  kind: CutKind,
): void {
  const upstream = httpRequest(
    { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host } },
    (up) => {
      res.writeHead(up.statusCode ?? 502, up.statusMessage, up.headers);
      let cut = false;
      up.on('data', (chunk: Buffer) => {
        if (cut) return;
        const end = counter.feed(chunk);
        if (end === undefined) {
          if (!res.write(chunk)) up.pause();
          return;
        }
        cut = true;
        onCut(kind, counter);
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
}

/** WebSocket (and any other) upgrades: replays the head with Host rewritten, then pipes raw bytes. */
function tunnel(req: IncomingMessage, client: Socket, head: Buffer, target: URL): void {
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
  upstream.on('error', () => client.destroy());
  client.on('error', () => upstream.destroy());
  client.on('close', () => upstream.destroy());
}
