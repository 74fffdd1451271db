/**
 * A refused upload's answer reaches its client. The client below writes its body and only
 * reads once it has written it (as a client busy uploading does): if the server reset the
 * connection right after answering, the client's next write would fail and Node would
 * drop the answer unread. The server answers, half-closes, and takes (and drops) the rest
 * of the body for a bounded time instead.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createExampleServer } from '../../src/example/index.js';
import { listen, type Listener } from '../../src/node/index.js';
import { REFUSAL_LINGER_MS } from '../../src/node/response.js';
import { createEndpoint } from '../../src/server/index.js';
import { within } from '../helpers/wait.js';

const MIB = 1024 * 1024;

interface Upload {
  /** Bytes of the body the client managed to write. */
  written: number;
  /** What the client read, once it read. */
  text: string;
  /** The error its socket met, if any. */
  error: string | undefined;
}

/** Sends a request head, then `bytes` of body in 256 KiB writes, each waiting for the last; reads only afterwards. */
function upload(port: number, head: string, bytes: number): Promise<Upload> {
  return new Promise((resolve) => {
    const socket: Socket = connect(port, '127.0.0.1');
    socket.pause();
    const out: Upload = { written: 0, text: '', error: undefined };
    socket.on('error', (error: NodeJS.ErrnoException) => (out.error ??= error.code ?? error.message));
    socket.on('data', (chunk: Buffer) => (out.text += chunk.toString('latin1')));
    socket.on('close', () => resolve(out));
    const chunk = Buffer.alloc(256 * 1024, 0x78);
    const next = (): void => {
      if (out.written >= bytes || socket.destroyed) {
        socket.resume();
        return;
      }
      socket.write(chunk, (error) => {
        if (error) return;
        out.written += chunk.length;
        next();
      });
    };
    socket.write(head, () => next());
  });
}

describe('a refused upload gets its answer', () => {
  let listener: Listener;
  before(async () => {
    const endpoint = createEndpoint({ server: () => createExampleServer() });
    listener = await listen(endpoint, { port: 0 });
  });
  after(() => listener.close());

  const head = (type: string, length: number): string =>
    `POST /mcp HTTP/1.1\r\nHost: ${new URL(listener.url).host}\r\nContent-Type: ${type}\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${length}\r\n\r\n`;

  it('refused before its body is read (415): the client writes 16 MiB more, then reads the 415', async () => {
    const port = Number(new URL(listener.url).port);
    const result = await within(upload(port, head('text/plain', 64 * MIB), 16 * MIB), 'the refused upload to end', 30_000);
    assert.equal(result.error, undefined, `the upload met ${result.error} after ${result.written} bytes`);
    assert.equal(result.written, 16 * MIB);
    assert.match(result.text, /^HTTP\/1\.1 415 /);
    assert.match(result.text, /connection: close/i);
  });

  it('refused past the per-body bound (413 by its declared size): the same', async () => {
    const port = Number(new URL(listener.url).port);
    const result = await within(upload(port, head('application/json', 1024 * MIB), 16 * MIB), 'the refused upload to end', 30_000);
    assert.equal(result.error, undefined, `the upload met ${result.error} after ${result.written} bytes`);
    assert.match(result.text, /^HTTP\/1\.1 413 /);
  });

  it('a client that never stops sending is cut off: the server drops the connection after its linger', async () => {
    const port = Number(new URL(listener.url).port);
    // A declared 1 TiB: the body never ends within the linger (past its end, the next bytes
    // would be a malformed request, which ends the connection for another reason).
    const started = performance.now();
    const result = await within(upload(port, head('text/plain', 1024 * 1024 * MIB), Number.POSITIVE_INFINITY), 'the server to drop the endless upload', 60_000);
    const lasted = performance.now() - started;
    assert.ok(result.error !== undefined, `the upload was never cut off (${result.written} bytes written)`);
    assert.ok(lasted >= REFUSAL_LINGER_MS, `cut off after ${lasted.toFixed(0)} ms, before the linger ended`);
  });
});
