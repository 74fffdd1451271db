/**
 * How a listener lets its connections go at a stop without cutting a request.
 *
 * At the stop's start the listener stops listening (a connection attempt is then refused,
 * which a proxy passes to the next replica) and closes its idle kept-alive connections, so
 * a proxy stops reusing them and picks another upstream for its next request. During the
 * drain every answer says `Connection: close`. A connection whose answer began before the
 * stop (a stream) cannot say so; when it ends, the connection is kept for one more request,
 * which gets an answer (and `Connection: close`): closing it there, the instant a client
 * sending calls back to back reuses it, would cut that request. After the drain, the
 * listener waits (within its window) for the connections left to be let go or used once
 * more, for the same reason. A connection is never closed under a request being read or
 * an answer being written: behind a proxy that is a 502 for a request nobody can tell
 * whether it ran. What is still open at the end gets {@link FLUSH_MS} to finish its
 * answer, then is closed.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/** How long answers being written when the listener closes get to finish, ms. */
export const FLUSH_MS = 200;

export interface Connections {
  /** Stops listening and closes idle connections. */
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
