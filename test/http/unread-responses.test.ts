/**
 * Clients that call and never read the answer, over real sockets. Each reader is bounded
 * (`maxBufferedBytes`), but their number is the client's to choose: all readers together
 * are bounded too (`maxBufferedBytesTotal`), and a reader that stops reading is let go
 * (`readerStallMs`), including one whose response already ended with bytes still queued,
 * which used to keep them for as long as the connection lived (100 such calls held
 * 1.4 GB of a server's memory, for good). The server's side of each connection is
 * watched: a client that reads nothing never sees its end.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ProcessState, defaultProcess } from '../../src/server/stream/process.js';
import { startFixture, type Fixture } from '../helpers/fixture.js';
import { initialize, messages, rpc, send, sessionHeaders, type Handshake } from '../helpers/sse-client.js';
import { waitFor } from '../helpers/wait.js';

const MIB = 1024 * 1024;
const PER_READER = 64 * MIB;
const TOTAL = 4 * MIB;
const CALLS = 12;

/** A POST of `body` on a raw socket that never reads what comes back. */
function unreadPost(f: Fixture, h: Handshake, body: unknown): { socket: Socket } {
  const text = JSON.stringify(body);
  const socket = connect(Number(f.url.port), '127.0.0.1');
  socket.on('error', () => {});
  socket.write(
    `POST ${f.url.pathname} HTTP/1.1\r\nHost: ${f.url.host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n` +
      `Mcp-Session-Id: ${h.sessionId}\r\nMcp-Protocol-Version: ${h.protocolVersion}\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
  );
  socket.pause();
  return { socket };
}

describe('responses nobody reads', () => {
  let f: Fixture;
  let h: Handshake;
  // The endpoint's own process state: its readers are counted there, and nowhere else.
  const state = new ProcessState();
  before(async () => {
    f = await startFixture({ limits: { maxBufferedBytes: PER_READER, maxBufferedBytesTotal: TOTAL, readerStallMs: 500 }, process: state });
    h = await initialize(f.url);
  });
  after(() => f.close());

  it(`${CALLS} calls of 30 MB each, never read: all readers together stay near ${TOTAL / MIB} MiB, every connection is let go, the session serves on`, async () => {
    // The server's side of each connection: the client's never sees the end, since it reads nothing.
    let open = 0;
    const onConnection = (socket: Socket): void => {
      open++;
      socket.once('close', () => open--);
    };
    f.listener.server.on('connection', onConnection);
    const posts = Array.from({ length: CALLS }, (_, i) =>
      unreadPost(f, h, rpc('tools/call', { name: 'emit', arguments: { count: 300, bytes: 100_000 } }, 9000 + i)),
    );
    let peak = 0;
    let elsewhere = 0;
    await waitFor(() => open === CALLS, 'the calls to connect');
    await waitFor(
      () => {
        peak = Math.max(peak, state.readers.total);
        elsewhere = Math.max(elsewhere, defaultProcess.readers.total);
        return open === 0;
      },
      () => `every unread connection to be let go (${open} open, ${state.readers.total} bytes queued)`,
      60_000,
    );
    f.listener.server.off('connection', onConnection);
    for (const p of posts) p.socket.destroy();
    // One write past the check at most per reader (a batch, or one 100 kB event) on top of the total.
    assert.ok(peak <= TOTAL + CALLS * 200_000, `peak ${peak} bytes queued for readers, bound ${TOTAL}`);
    assert.ok(peak > 0, "the readers were counted in the endpoint's process state");
    assert.equal(elsewhere, 0, 'and never in the default one');
    assert.equal(state.readers.total, 0, 'nothing counted once every reader is gone');
    const ok = await send(f.url, { body: rpc('tools/call', { name: 'test_simple_text', arguments: {} }), headers: sessionHeaders(h) });
    assert.equal(ok.status, 200);
    assert.ok(
      messages(ok.events).some((m) => 'result' in m),
      ok.text,
    );
    assert.deepEqual(f.errors, []);
  });
});
