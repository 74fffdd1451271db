/**
 * A draining `serve` goes out of rotation at once: from SIGTERM on it refuses new
 * connections (a proxy passes the request to another replica), and a connection kept
 * alive from before (idle, or whose stream ends during the drain) is not closed under a
 * request a proxy may be writing on it: that request gets the drain's answer and
 * `Connection: close`; all while a call it runs still finishes. A request that reaches the endpoint after its drain gets the drain's answer
 * (503 `server-draining`, `Retry-After`), not `endpoint-closed`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request, type IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startReplica, type Replica } from '../helpers/replicas.js';
import { initialize, rpc, sessionHeaders, type Handshake } from '../helpers/sse-client.js';
import { waitFor, within } from '../helpers/wait.js';
import { createEndpoint } from '../../src/server/endpoint.js';
import { memoryStore } from '../../src/store/memory/index.js';
import { createExampleServer } from '../../src/example/index.js';

/** A 6 s call: the drain lasts at least that long. */
const CALL = { count: 300, intervalMs: 20 };

/** Sends one request on `agent`; resolves with the response once its headers arrived, and the socket it went on. */
function open(url: URL, agent: Agent, method: string, headers: Record<string, string>, body?: unknown): Promise<{ res: IncomingMessage; socket: Socket }> {
  return new Promise((resolve, reject) => {
    let socket: Socket | undefined;
    const req = request(url, { method, agent, headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers } }, (res) =>
      resolve({ res, socket: socket as Socket }),
    );
    req.on('socket', (s) => (socket = s));
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

function closedFlag(socket: Socket): { closed: boolean } {
  const flag = { closed: socket.destroyed };
  socket.once('close', () => (flag.closed = true));
  return flag;
}

/** Does a new TCP connection to `port` get refused now? */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

describe('a draining serve goes out of rotation at once', () => {
  let dir: string;
  let replica: Replica;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'drain-connections-'));
    replica = await startReplica(`sqlite:${join(dir, 's.db')}`, ['--drain-ms', '20000']);
  });
  after(async () => {
    await replica?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses new connections and closes idle and ended ones while its call still runs', async () => {
    const url = replica.url;
    const port = Number(url.port);
    const [a, b]: Handshake[] = await Promise.all([initialize(url), initialize(url)]);
    const headers = (h: Handshake) => sessionHeaders(h, { accept: 'application/json, text/event-stream' });
    // The long call (session A), on its own connection.
    const call = await open(url, new Agent(), 'POST', headers(a as Handshake), rpc('tools/call', { name: 'emit', arguments: CALL }));
    let body = '';
    const done = new Promise<void>((resolve) => call.res.on('data', (c: Buffer) => (body += c.toString())).on('end', resolve));
    const running = { now: true };
    void done.then(() => (running.now = false));
    // An idle kept-alive connection, as a proxy's pool holds.
    const pool = new Agent({ keepAlive: true, maxSockets: 1 });
    const idle = await open(new URL('/elsewhere', url), pool, 'GET', {});
    idle.res.resume();
    await new Promise((resolve) => idle.res.on('end', resolve));
    const idleClosed = closedFlag(idle.socket);
    // Session B's standalone stream, opened before the drain: it ends when the drain lets B go.
    const streamPool = new Agent({ keepAlive: true, maxSockets: 1 });
    const stream = await open(url, streamPool, 'GET', sessionHeaders(b as Handshake, { accept: 'text/event-stream' }));
    assert.equal(stream.res.statusCode, 200);
    const streamEnded = new Promise((resolve) => stream.res.on('end', resolve).resume());

    replica.child.kill('SIGTERM');
    await waitFor(() => refused(port), 'new connections refused');
    assert.ok(running.now, 'new connections were refused only once the call had ended');
    // The idle kept-alive connection is not closed under a request a proxy may be writing:
    // the next request on it is answered (not accepted, here) and told to close.
    const onIdle = await open(url, pool, 'POST', headers(a as Handshake), rpc('tools/call', { name: 'emit', arguments: { count: 1, intervalMs: 0 } }));
    assert.equal(onIdle.socket, idle.socket, 'the same connection');
    let idleAnswer = '';
    await new Promise((resolve) => onIdle.res.on('data', (c: Buffer) => (idleAnswer += c.toString())).on('end', resolve));
    assert.equal(onIdle.res.statusCode, 503, idleAnswer);
    assert.match(idleAnswer, /server-draining/);
    assert.equal(onIdle.res.headers.connection, 'close');
    await waitFor(() => idleClosed.closed, 'the kept-alive connection closed after its answer');
    assert.ok(running.now, 'the kept-alive connection was answered only once the call had ended');
    await within(streamEnded, "B's stream ended by the drain");
    // Its connection could not be told to close (its answer began before the drain): it is
    // not closed under the next request a client sends at once, which gets the drain's answer.
    const again = await open(url, streamPool, 'POST', headers(b as Handshake), rpc('tools/call', { name: 'emit', arguments: { count: 1, intervalMs: 0 } }));
    assert.equal(again.socket, stream.socket, 'the same connection');
    let refusal = '';
    await new Promise((resolve) => again.res.on('data', (c: Buffer) => (refusal += c.toString())).on('end', resolve));
    assert.equal(again.res.statusCode, 503, refusal);
    assert.match(refusal, /server-draining/);
    assert.equal(again.res.headers.connection, 'close');
    assert.ok(running.now, "B's connection was answered only once the call had ended");

    await within(done, 'the call running at SIGTERM finished', 30_000);
    assert.equal(call.res.statusCode, 200);
    assert.match(body, /"result"/, 'the call running at SIGTERM was answered');
    await within(
      new Promise((resolve) => (replica.child.exitCode !== null ? resolve(undefined) : replica.child.once('exit', resolve))),
      'serve exited',
      30_000,
    );
    assert.equal(replica.child.exitCode, 0);
  });

  it('answers a request reaching the endpoint after its drain with the drain refusal', async () => {
    const endpoint = createEndpoint({ server: () => createExampleServer(), store: memoryStore() });
    await endpoint.close({ drainMs: 1 });
    const response = await endpoint.handle(
      new Request('http://127.0.0.1/mcp', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify(rpc('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '0' } })),
      }),
    );
    assert.equal(response.status, 503);
    assert.equal(response.headers.get('retry-after'), '1');
    const answer = (await response.json()) as { error: { data: { reason: string } } };
    assert.equal(answer.error.data.reason, 'server-draining');
  });
});
