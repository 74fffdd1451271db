/**
 * How a listener lets its connections go at a stop without cutting a request.
 *
 * At the stop's start the listener stops listening (a connection attempt is then refused,
 * which a proxy passes to the next replica) and closes its idle kept-alive connections, so
 * a proxy stops reusing them and picks another upstream for its next request. From then on
 * every answer says `Connection: close`, and a connection whose answer was written before
 * the stop (a stream) is closed as soon as it is idle again: no connection carries a new
 * request to a process that is going away. A connection is never closed under a request
 * being read or an answer being written: behind a proxy that is a 502 for a request nobody
 * can tell whether it ran. What is still open at the end (streams) gets {@link FLUSH_MS}
 * to finish its answer, then is closed.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/** How long answers being written when the listener closes get to finish, ms. */
export const FLUSH_MS = 200;

export interface Connections {
  /** Stops listening and closes idle connections; each other one closes once its answer is written. Once only. */
  stop(): void;
  /** Resolves once no connection is open, or at `deadline` (ms since the epoch). */
  gone(deadline: number): Promise<void>;
  /** Stops (if not yet), lets answers being written finish for up to {@link FLUSH_MS}, then closes what is left. */
  close(): Promise<void>;
}

export function trackConnections(server: Server): Connections {
  const open = new Set<Socket>();
  const waiters = new Set<() => void>();
  let closed: Promise<void> | undefined;
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => {
      open.delete(socket);
      if (open.size === 0) for (const w of waiters) w();
    });
  });
  // After the stop, a connection idle again (its answer written) is closed at once.
  server.on('request', (_req, res: NodeJS.EventEmitter) => {
    res.once('finish', () => {
      if (closed) setImmediate(() => server.closeIdleConnections());
    });
  });
  const stop = (): Promise<void> => {
    closed ??= new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    return closed;
  };
  return {
    stop() {
      void stop();
    },
    async gone(deadline) {
      if (open.size === 0 || Date.now() >= deadline) return;
      let timer: ReturnType<typeof setTimeout> | undefined;
      let done: () => void = () => {};
      await new Promise<void>((resolve) => {
        done = resolve;
        waiters.add(done);
        timer = setTimeout(resolve, deadline - Date.now());
      });
      waiters.delete(done);
      clearTimeout(timer);
    },
    async close() {
      const stopped = stop();
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([stopped, new Promise<void>((resolve) => (timer = setTimeout(resolve, FLUSH_MS)))]);
      clearTimeout(timer);
      server.closeAllConnections();
      await stopped;
    },
  };
}
