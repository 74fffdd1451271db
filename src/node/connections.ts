/**
 * How a listener lets its connections go at a stop without cutting a request.
 *
 * At the stop's start the listener stops listening: a connection attempt is then refused,
 * which a proxy passes to the next replica. Connections kept alive from before are not
 * closed while idle: a proxy may be writing a request on one in that instant, and a
 * request cut after it was written is a 502 nobody can tell whether it ran. Each carries
 * at most one more request, answered (by the drain's rules) with `Connection: close`, or
 * is let go by its client; the listener waits for that within the drain's window. What is
 * still open at the end gets {@link FLUSH_MS} to finish its answer, then is closed.
 */
import type { Server } from 'node:http';
import net, { type Socket } from 'node:net';

/** How long answers being written when the listener closes get to finish, ms. */
export const FLUSH_MS = 200;

export interface Connections {
  /** Stops listening; connections already open stay. */
  stop(): void;
  /** Resolves once no connection is open, or at `deadline` (ms since the epoch). */
  gone(deadline: number): Promise<void>;
  /** Stops (if not yet), closes idle connections, lets answers being written finish for up to {@link FLUSH_MS}, then closes what is left. */
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
    // net's close, not http's: http's also closes idle connections, under a request on its way.
    closed ??= new Promise<void>((resolve) => net.Server.prototype.close.call(server, () => resolve()));
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
      server.closeIdleConnections();
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([stopped, new Promise<void>((resolve) => (timer = setTimeout(resolve, FLUSH_MS)))]);
      clearTimeout(timer);
      server.closeAllConnections();
      await stopped;
    },
  };
}
