/**
 * The Node adapter's direct mode against real sockets: an SSE sink behind a `Response` is
 * taken over once the adapter has written what its body stream held, and from then on
 * writes straight to the response, under the same bound, pacing and cut rules.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, describe, it } from 'node:test';
import { ReaderBudget } from '../../src/server/stream/reader-budget.js';
import { SseSink } from '../../src/server/stream/sse-sink.js';
import { serveResponse, type OneResponse } from '../helpers/one-response.js';
import { waitFor, within } from '../helpers/wait.js';

interface Served extends OneResponse {
  ended: () => number;
}

/** Serves one request with `sink`'s body; `before` runs on the sink before the Response is written. */
async function serveSink(sink: SseSink, ends: { count: number }, before?: (sink: SseSink) => void): Promise<Served> {
  const served = await serveResponse(sink.body, () => before?.(sink));
  return { ...served, ended: () => ends.count };
}

function client(port: number, paused: boolean): { socket: Socket; text: () => string; closed: Promise<void> } {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  let text = '';
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => (text += chunk));
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  if (paused) socket.pause();
  return { socket, text: () => text, closed };
}

const event = (i: number, bytes = 10): { id: string; data: string; retry: undefined } => ({
  id: `e.s.${i}.c`,
  data: `${i}:${'x'.repeat(bytes)}`,
  retry: undefined,
});

describe('SSE sink, written directly by the Node adapter', () => {
  const cleanup: Array<() => void> = [];
  after(() => {
    for (const c of cleanup) c();
  });

  it('what the body held goes first, then live writes, in order; close() ends the response', async () => {
    const ends = { count: 0 };
    const sink = new SseSink({ maxBufferedBytes: 1 << 20, keepAliveMs: 0, onEnd: () => ends.count++ });
    // A priming event written before the adapter has the response (the stream holds it).
    const s = await serveSink(sink, ends, (k) => k.write([event(1)]));
    const c = client(s.port, false);
    cleanup.push(() => {
      c.socket.destroy();
      s.server.close();
    });
    await s.res;
    await waitFor(() => c.text().includes('data: 1:'), 'the event written before the adapter attached');
    assert.equal(sink.bodyQueuedBytes, 0, 'the adapter took what the stream held');
    for (let i = 2; i <= 50; i++) assert.equal(sink.write([event(i)]), true);
    sink.close();
    await within(
      c.closed.then(() => s.written),
      'the response ends after close()',
    );
    const seen = [...c.text().matchAll(/data: (\d+):/g)].map((m) => Number(m[1]));
    assert.deepEqual(
      seen,
      Array.from({ length: 50 }, (_, i) => i + 1),
      'every event, once, in order',
    );
    assert.equal(ends.count, 1, 'onEnd ran once');
  });

  it('a reader that never reads: what the response holds stays within the bound, and the write past it cuts (socket destroyed)', async () => {
    const max = 200_000;
    const ends = { count: 0 };
    const sink = new SseSink({ maxBufferedBytes: max, keepAliveMs: 0, onEnd: () => ends.count++ });
    const s = await serveSink(sink, ends);
    const c = client(s.port, true);
    cleanup.push(() => {
      c.socket.destroy();
      s.server.close();
    });
    const res = await s.res;
    await waitFor(() => sink.write([event(0)]) && res.headersSent, 'the sink attached');
    let i = 1;
    await waitFor(() => {
      // Kernel buffers fill first; then the response holds the rest, up to the bound.
      const ok = sink.write([event(i++, 20_000)]);
      if (ok) assert.ok(sink.queuedBytes <= max, `queued ${sink.queuedBytes} > ${max}`);
      return !ok;
    }, 'a write past the bound');
    assert.equal(sink.ended, true, 'the lagging reader was cut');
    assert.equal(ends.count, 1);
    await within(new Promise<void>((resolve) => (res.destroyed ? resolve() : res.once('close', () => resolve()))), 'the socket destroyed after the cut');
    await within(s.written, 'writeResponse settles');
  });

  it('drained() waits while the response is backed up and resolves once the client reads', async () => {
    const ends = { count: 0 };
    const sink = new SseSink({ maxBufferedBytes: 64 << 20, keepAliveMs: 0, onEnd: () => ends.count++ });
    const s = await serveSink(sink, ends);
    const c = client(s.port, true);
    cleanup.push(() => {
      c.socket.destroy();
      s.server.close();
    });
    await s.res;
    let i = 0;
    await waitFor(() => {
      sink.write([event(i++, 50_000)]);
      return sink.queuedBytes >= 64 * 1024;
    }, 'the response to back up');
    assert.equal(sink.bodyQueuedBytes, 0, 'the response holds the backlog, not the body stream: the sink writes directly');
    let drained = false;
    const waiting = sink.drained().then(() => (drained = true));
    await Promise.resolve();
    assert.equal(drained, false, 'a paced writer waits while the client reads nothing');
    c.socket.resume();
    await within(waiting, 'drained() once the client reads');
    assert.equal(sink.ended, false);
  });

  it('takenOver(): a reader with bytes still queued is cut (socket destroyed); one keeping up ends normally', async () => {
    for (const lagging of [true, false]) {
      const ends = { count: 0 };
      const sink = new SseSink({ maxBufferedBytes: 64 << 20, keepAliveMs: 0, onEnd: () => ends.count++ });
      const s = await serveSink(sink, ends);
      const c = client(s.port, lagging);
      cleanup.push(() => {
        c.socket.destroy();
        s.server.close();
      });
      const res = await s.res;
      let i = 0;
      if (lagging) {
        await waitFor(() => {
          sink.write([event(i++, 50_000)]);
          return sink.queuedBytes > 0;
        }, 'bytes queued in the response');
      } else {
        sink.write([event(1)]);
        await waitFor(() => c.text().includes('data: 1:') && sink.queuedBytes === 0, 'the reader caught up');
      }
      sink.takenOver();
      assert.equal(sink.ended, true);
      await within(
        c.closed.then(() => s.written),
        'the connection to end',
      );
      if (lagging) assert.equal(res.destroyed && !res.writableFinished, true, 'cut: destroyed before the response finished');
      else assert.equal(res.writableFinished, true, 'ended normally: the response finished');
    }
  });

  /**
   * A served sink whose client reads nothing, filled until the response itself holds
   * `bytes` (more than one write: what a write leaves queued in its own tick is not a backlog).
   */
  async function backedUp(options: Partial<ConstructorParameters<typeof SseSink>[0]>, bytes: number): Promise<{ sink: SseSink; res: Awaited<Served['res']> }> {
    const sink = new SseSink({ maxBufferedBytes: 64 << 20, keepAliveMs: 0, ...options });
    const s = await serveSink(sink, { count: 0 });
    const c = client(s.port, true);
    cleanup.push(() => {
      c.socket.destroy();
      s.server.close();
    });
    const res = await s.res;
    let i = 0;
    await waitFor(() => {
      assert.equal(sink.write([event(i++, 50_000)]), true, 'not cut while filling');
      return sink.queuedBytes >= bytes;
    }, 'the response to back up');
    return { sink, res };
  }

  it('all readers together: past maxBufferedBytesTotal a reader that is behind is cut, and the others are not', async () => {
    const total = 4 << 20;
    // A budget of their own: what they count is all that is counted there.
    const readers = new ReaderBudget();
    const a = await backedUp({ maxBufferedBytesTotal: total, readers }, 3 << 20);
    const b = await backedUp({ maxBufferedBytesTotal: total, readers }, 1);
    let i = 0;
    let held = 0;
    await waitFor(() => {
      held = b.sink.queuedBytes;
      assert.ok(readers.total <= total + 100_000, `counted ${readers.total} bytes, bound ${total}`);
      return !b.sink.write([event(i++, 50_000)]);
    }, 'the second reader to be cut');
    assert.ok(b.sink.ended);
    // Its own bound (64 MiB) is far off: the total, of which the first reader holds 3 MiB, cut it.
    assert.ok(held < 2 << 20, `the second reader held ${held} bytes when cut`);
    assert.equal(a.sink.ended, false, 'the reader already holding its bytes stays');
    assert.ok(readers.total > 0, 'the reader that stays is still counted');
    a.sink.cut();
    assert.equal(readers.total, 0, 'a cut reader is no longer counted');
  });

  it('a reader that does not once empty its queue within stallMs is cut at the next write (a keep-alive)', async () => {
    const { sink, res } = await backedUp({ stallMs: 200, keepAliveMs: 50 }, 200_000);
    await waitFor(() => sink.ended, 'the stalled reader to be cut by a keep-alive write');
    await within(new Promise<void>((resolve) => (res.destroyed ? resolve() : res.once('close', () => resolve()))), 'its connection destroyed');
  });

  it('a response that ended with bytes queued: its connection is closed once stallMs passes without them taken', async () => {
    const readers = new ReaderBudget();
    const { sink, res } = await backedUp({ stallMs: 200, readers }, 200_000);
    sink.close();
    assert.ok(readers.total > 0, 'still counted while the socket has not taken it');
    await within(new Promise<void>((resolve) => (res.destroyed ? resolve() : res.once('close', () => resolve()))), 'the lingering connection destroyed');
    assert.equal(res.destroyed, true, 'let go');
    assert.equal(readers.total, 0);
  });

  it('the client leaves: the sink ends (onEnd) and writeResponse settles', async () => {
    const ends = { count: 0 };
    const sink = new SseSink({ maxBufferedBytes: 1 << 20, keepAliveMs: 0, onEnd: () => ends.count++ });
    const s = await serveSink(sink, ends);
    const c = client(s.port, false);
    cleanup.push(() => s.server.close());
    await s.res;
    sink.write([event(1)]);
    await waitFor(() => c.text().includes('data: 1:'), 'the first event');
    c.socket.destroy();
    await waitFor(() => sink.ended, 'the sink to end when its client leaves');
    assert.equal(ends.count, 1);
    assert.equal(sink.write([event(2)]), false, 'writes after the client left are refused');
    await within(s.written, 'writeResponse settles');
  });
});
