/**
 * writeResponse against real sockets: a reader that never reads, cut by the server (the
 * body errors), loses its socket at once and its queued bytes with it; a client that
 * leaves cancels the body.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, describe, it } from 'node:test';
import { serveResponse, type OneResponse } from '../helpers/one-response.js';
import { waitFor, within } from '../helpers/wait.js';

interface Served extends OneResponse {
  body: ReadableStreamDefaultController<Uint8Array>;
  cancelled: () => boolean;
}

async function serveOne(): Promise<Served> {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let cancelled = false;
  const body = new ReadableStream<Uint8Array>({
    start: (c) => {
      controller = c;
    },
    cancel: () => {
      cancelled = true;
    },
  });
  const served = await serveResponse(body);
  return { ...served, body: controller, cancelled: () => cancelled };
}

function stalledClient(port: number): Socket {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  socket.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  // Never reads: the kernel buffers fill and the server's writes back up.
  socket.pause();
  return socket;
}

describe('writeResponse', () => {
  const cleanup: Array<() => void> = [];
  after(() => {
    for (const c of cleanup) c();
  });

  it('a cut reader that never reads: the body errors → the socket is destroyed at once, its queued bytes dropped', async () => {
    const s = await serveOne();
    const client = stalledClient(s.port);
    cleanup.push(() => {
      client.destroy();
      s.server.close();
    });
    const res = await s.res;
    const chunk = new Uint8Array(256 * 1024).fill(0x61);
    // Fill until the adapter waits on drain: the reader reads nothing.
    await waitFor(() => {
      s.body.enqueue(chunk);
      return res.writableNeedDrain && s.body.desiredSize !== null && s.body.desiredSize <= 0;
    }, 'the response to back up');
    assert.ok(res.writableLength > 0, 'bytes are queued for the stalled reader');
    s.body.error(new Error('reader cut by the server'));
    await within(new Promise<void>((resolve) => (res.destroyed ? resolve() : res.once('close', () => resolve()))), 'socket destroyed after the cut', 5_000);
    assert.ok(res.socket === null || res.socket.destroyed, 'socket destroyed');
    await within(s.written, 'writeResponse settles');
  });

  it('the client leaves mid-stream: the body is cancelled and writeResponse settles', async () => {
    const s = await serveOne();
    const client = connect(s.port, '127.0.0.1');
    client.on('error', () => {});
    client.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    cleanup.push(() => s.server.close());
    await s.res;
    s.body.enqueue(new TextEncoder().encode('data: 1\n\n'));
    await new Promise<void>((resolve) => client.once('data', () => resolve()));
    client.destroy();
    await waitFor(() => s.cancelled(), 'the body to be cancelled');
    await within(s.written, 'writeResponse settles');
  });

  it('the client leaves while the adapter waits on drain: it stops waiting and cancels the body', async () => {
    const s = await serveOne();
    const client = stalledClient(s.port);
    cleanup.push(() => s.server.close());
    const res = await s.res;
    const chunk = new Uint8Array(256 * 1024).fill(0x62);
    await waitFor(() => {
      s.body.enqueue(chunk);
      return res.writableNeedDrain && s.body.desiredSize !== null && s.body.desiredSize <= 0;
    }, 'the response to back up');
    client.destroy();
    await waitFor(() => s.cancelled(), 'the body to be cancelled');
    await within(s.written, 'writeResponse settles');
  });
});
