/** A proxy's listening socket, and a close that does not wait for its clients. */
import type { Server, Socket } from 'node:net';

/**
 * Listens on `host:port` (loopback and a free port by default); the returned `close`
 * destroys every connection still open, then closes the server.
 */
export async function listen(server: Server, host = '127.0.0.1', port = 0): Promise<() => Promise<void>> {
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
}
