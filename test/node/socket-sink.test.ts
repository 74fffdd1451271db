/**
 * SocketSink over a real `ws` socket whose reader stops reading: `drained()` waits while
 * more than 1 MiB is queued and wakes from `ws`'s send callbacks once the reader catches
 * up, or at once when the socket closes. What it holds counts with every other reader of
 * the process, and past that total it is closed while behind.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { after, describe, it } from 'node:test';
import { WebSocketServer, type WebSocket } from 'ws';
import { wsPort } from '../../src/node/websocket.js';
import { SocketSink } from '../../src/server/stream/event-sink.js';
import { ReaderBudget } from '../../src/server/stream/reader-budget.js';
import { waitFor, within } from '../helpers/wait.js';

async function pair(): Promise<{ server: Server; ws: WebSocket; client: Socket }> {
  const wss = new WebSocketServer({ noServer: true });
  const server = createServer();
  const accepted = new Promise<WebSocket>((resolve) => {
    server.on('upgrade', (req, socket, head) => wss.handleUpgrade(req, socket, head, resolve));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = connect((server.address() as AddressInfo).port, '127.0.0.1');
  client.on('error', () => {});
  client.write(
    'GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
  );
  const ws = await accepted;
  ws.on('error', () => {});
  return { server, ws, client };
}

/** Settles to true if `p` resolved before the event loop came around. */
async function resolvedNow(p: Promise<void>): Promise<boolean> {
  return Promise.race([p.then(() => true), new Promise<boolean>((resolve) => setImmediate(() => resolve(false)))]);
}

describe('SocketSink backpressure', () => {
  const servers: Server[] = [];
  after(() => {
    for (const s of servers) s.close();
  });

  it('drained() waits for a reader that stopped, and wakes once it reads again', async () => {
    const { server, ws, client } = await pair();
    servers.push(server);
    client.pause();
    const sink = new SocketSink(wsPort(ws), { maxBufferedBytes: 256 * 1024 * 1024, maxBufferedBytesTotal: 1024 * 1024 * 1024 });
    const big = 'x'.repeat(512 * 1024);
    let n = 0;
    await waitFor(() => {
      sink.write([{ id: String(n++), data: big }]);
      return ws.bufferedAmount > 2 * 1024 * 1024;
    }, 'the socket to back up');
    const drained = sink.drained();
    assert.equal(await resolvedNow(drained), false, 'waits while more than 1 MiB is queued');
    client.resume();
    client.on('data', () => {});
    await within(drained, 'drained() once the reader reads');
    assert.ok(ws.bufferedAmount <= 1024 * 1024);
    client.destroy();
  });

  it('drained() resolves when the socket closes under it', async () => {
    const { server, ws, client } = await pair();
    servers.push(server);
    client.pause();
    const sink = new SocketSink(wsPort(ws), { maxBufferedBytes: 256 * 1024 * 1024, maxBufferedBytesTotal: 1024 * 1024 * 1024 });
    const big = 'y'.repeat(512 * 1024);
    let n = 0;
    await waitFor(() => {
      sink.write([{ id: String(n++), data: big }]);
      return ws.bufferedAmount > 2 * 1024 * 1024;
    }, 'the socket to back up');
    const drained = sink.drained();
    assert.equal(await resolvedNow(drained), false);
    client.destroy();
    await within(drained, 'drained() once the socket closed');
    await waitFor(() => sink.ended, 'the sink to end with its socket');
    assert.equal(sink.write([{ id: 'late', data: 'z' }]), false, 'an ended sink takes no more');
  });

  it('counts toward all readers together: past maxBufferedBytesTotal, behind, it is closed; closed, it no longer counts', async () => {
    const { server, ws, client } = await pair();
    servers.push(server);
    client.pause();
    // A budget of its own: what it counts is all that is counted there.
    const readers = new ReaderBudget();
    const total = 4 * 1024 * 1024;
    const sink = new SocketSink(wsPort(ws), { maxBufferedBytes: 256 * 1024 * 1024, maxBufferedBytesTotal: total, readers });
    const big = 'w'.repeat(512 * 1024);
    let n = 0;
    let held = 0;
    let counted = 0;
    await waitFor(() => {
      held = ws.bufferedAmount;
      counted = Math.max(counted, readers.total);
      return !sink.write([{ id: String(n++), data: big }]);
    }, 'the socket to be closed past the total');
    assert.ok(counted > 0, 'counted in its budget while it held bytes');
    assert.ok(held <= total, `held ${held} bytes when closed; its own bound (256 MiB) is far off`);
    assert.equal(sink.ended, true);
    assert.equal(readers.total, 0, 'no longer counted');
    client.destroy();
  });
});
