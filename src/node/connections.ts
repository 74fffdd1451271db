/**
 * How a listener lets its connections go at the end of a drain without cutting a request.
 * A connection is never closed under a request its client is writing or an answer being
 * written: behind a proxy that is a 502 for a request nobody can tell whether it ran.
 * During a drain every answer says `Connection: close`, so each connection kept alive
 * from before closes after its next answer, or when its client lets it go; the listener
 * waits for that, within the drain's window, before it closes what is left.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/** How long answers being written when the listener closes get to finish, ms. */
export const FLUSH_MS = 200;

export interface Connections {
  /** Resolves once no connection is open, or at `deadline` (ms since the epoch). */
  gone(deadline: number): Promise<void>;
  /**
   * Stops listening (a connection attempt is then refused, which a proxy passes to the
   * next replica), closes idle connections, lets answers being written finish for up to
   * {@link FLUSH_MS}, then closes what is left.
   */
  close(): Promise<void>;
}

export function trackConnections(server: Server): Connections {
  const open = new Set<Socket>();
  const waiters = new Set<() => void>();
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => {
      open.delete(socket);
      if (open.size === 0) for (const w of waiters) w();
    });
  });
  return {
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
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([closed, new Promise<void>((resolve) => (timer = setTimeout(resolve, FLUSH_MS)))]);
      clearTimeout(timer);
      server.closeAllConnections();
      await closed;
    },
  };
}
