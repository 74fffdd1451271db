/**
 * Request bodies held one byte short of complete, over real sockets. Each body is bounded
 * (`maxBodyBytes`), but how many arrive at once is the clients' choice: all bodies being
 * received are bounded too (`maxBodyBytesTotal`), and a body that would pass that gets 503
 * `server-busy` (retryable). Before, 200 connections holding 4 MB bodies took `serve` from
 * 84 MB to 904 MB of RSS, and more connections would have taken more.
 */
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ProcessState, defaultProcess } from '../../src/server/stream/process.js';
import { startFixture, type Fixture } from '../helpers/fixture.js';
import { rpc, send } from '../helpers/sse-client.js';
import { waitFor } from '../helpers/wait.js';
import { assertRefusal } from './refusal-assert.js';

const MIB = 1024 * 1024;

/** An initialize padded to `bytes` of JSON. */
function paddedInitialize(bytes: number): string {
  const base = JSON.stringify(
    rpc('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'body-budget', version: '0' }, pad: '' }),
  );
  return base.replace('"pad":""', `"pad":"${'x'.repeat(bytes - base.length)}"`);
}

/** Sends all of `body` but its last byte on a raw socket, and holds. */
function holdBody(f: Fixture, body: string): Socket {
  const socket = connect(Number(f.url.port), '127.0.0.1');
  socket.on('error', () => {});
  socket.write(
    `POST ${f.url.pathname} HTTP/1.1\r\nHost: ${f.url.host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, -1)}`,
  );
  return socket;
}

describe('request bodies being received, all together', () => {
  let f: Fixture;
  // The endpoint's own process state: its bodies are counted there, and nowhere else.
  const state = new ProcessState();
  before(async () => {
    f = await startFixture({ limits: { maxBodyBytes: MIB, maxBodyBytesTotal: 1.5 * MIB }, process: state });
  });
  after(() => f.close());

  it('past maxBodyBytesTotal a body gets 503 server-busy; smaller ones still fit; a body let go frees its share', async () => {
    const body = paddedInitialize(MIB - 100);
    const held = holdBody(f, body);
    await waitFor(
      () => state.bodies.receiving >= MIB - 200,
      () => `the held body to be received (${state.bodies.receiving} bytes)`,
    );
    assert.equal(defaultProcess.bodies.receiving, 0, 'nothing counted in the default process state');
    const busy = await send(f.url, { body });
    assertRefusal(busy, 'server-busy', 'a second large body');
    assert.equal(busy.headers['retry-after'], '1');
    assert.equal((await send(f.url, { body: paddedInitialize(1000) })).status, 200, 'a small body still fits');
    held.destroy();
    await waitFor(
      () => state.bodies.receiving === 0,
      () => `the held body's share to be freed (${state.bodies.receiving} bytes)`,
    );
    assert.equal((await send(f.url, { body })).status, 200, 'the large body, once there is room');
    assert.deepEqual(f.errors, []);
  });
});
