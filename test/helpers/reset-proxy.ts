/**
 * An HTTP proxy that resets connections at seeded random points of the requests it is told
 * to fault: before forwarding (the request read, nothing passed on), during (half the body
 * passed on), after (all of it passed on, the answer withheld), mid-response (after some
 * bytes of the answer), or later, once the connection is idle again (a stale keep-alive the
 * client may reuse). It counts every request body it passed on whole, so that a test can
 * tell whether the client sent anything twice.
 */
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { prng } from './prng.js';

export type ResetPoint = 'none' | 'before' | 'during' | 'after' | 'mid-response' | 'stale';
const POINTS: readonly ResetPoint[] = ['none', 'none', 'none', 'before', 'during', 'after', 'mid-response', 'stale'];

export interface ResetProxy {
  readonly url: URL;
  /** Request bodies passed on whole to the endpoint. */
  readonly forwarded: readonly string[];
  /** Resets made, by point. */
  readonly resets: Readonly<Record<ResetPoint, number>>;
  close(): Promise<void>;
}

/** `fault(req, body)`: is this request one to fault (the others pass untouched)? */
export async function startResetProxy(upstream: URL, seed: number, fault: (req: IncomingMessage, body: string) => boolean): Promise<ResetProxy> {
  const rand = prng(seed);
  const forwarded: string[] = [];
  const resets: Record<ResetPoint, number> = { none: 0, before: 0, during: 0, after: 0, 'mid-response': 0, stale: 0 };
  const sockets = new Set<Socket>();
  const reset = (socket: Socket, point: ResetPoint): void => {
    resets[point]++;
    socket.resetAndDestroy();
  };
  const pass = (req: IncomingMessage, res: ServerResponse, body: Buffer, point: ResetPoint): void => {
    const up = httpRequest(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host } },
      (answer) => {
        if (point === 'after') {
          answer.destroy();
          return reset(req.socket, point);
        }
        const { connection: _c, 'keep-alive': _k, ...headers } = answer.headers;
        res.writeHead(answer.statusCode ?? 502, headers);
        res.flushHeaders();
        let left = point === 'mid-response' ? 1 + Math.floor(rand() * 400) : Infinity;
        answer.on('data', (chunk: Buffer) => {
          if (chunk.length < left) {
            left -= chunk.length;
            res.write(chunk);
            return;
          }
          res.write(chunk.subarray(0, left), () => reset(req.socket, point));
          answer.destroy();
        });
        answer.on('end', () => res.end());
        answer.on('error', () => res.destroy());
      },
    );
    up.on('error', () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
    res.on('close', () => up.destroy());
    if (point === 'during') {
      up.write(body.subarray(0, body.length >> 1), () => {
        up.destroy();
        reset(req.socket, point);
      });
      return;
    }
    forwarded.push(body.toString('utf8'));
    up.end(body);
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const point = fault(req, body.toString('utf8')) ? (POINTS[Math.floor(rand() * POINTS.length)] as ResetPoint) : 'none';
      if (point === 'before') return reset(req.socket, point);
      if (point === 'stale') {
        // Once the answer is out, the idle connection is reset: a stale keep-alive.
        res.on('finish', () => setImmediate(() => reset(req.socket, point)));
      }
      pass(req, res, body, point);
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}${upstream.pathname}`),
    forwarded,
    resets,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
