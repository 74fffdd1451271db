/**
 * The modern leg's per-client bounds, over real sockets: `subscriptions/listen` slots per
 * client (its principal, else its address) and per process, and a `requestState` bound to
 * the principal (or, without one, the credential) that received it.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request, type ClientRequest } from 'node:http';
import { createEndpoint } from '../../src/server/index.js';
import { listen, type Listener } from '../../src/node/index.js';
import { createExampleServer } from '../../src/example/index.js';
import { createExampleHandler } from '../../src/example/modern/index.js';
import { waitFor } from '../helpers/wait.js';

const MODERN = '2026-07-28';
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
  'io.modelcontextprotocol/clientInfo': { name: 'bounds', version: '1.0.0' },
};

interface Answer {
  status: number;
  /** The JSON body, or the first SSE chunk of a stream. */
  first: string;
  /** Ends the exchange (a listen stream: the client goes away). */
  close(): void;
}

/** One modern POST over node:http, resolved at its first body chunk (a listen stays open). */
function post(url: URL, body: object, headers: Record<string, string> = {}, localAddress?: string): Promise<Answer> {
  const message = body as { method: string; params?: { name?: string } };
  return new Promise((resolve, reject) => {
    let req: ClientRequest | undefined = undefined;
    req = request(
      url,
      {
        method: 'POST',
        ...(localAddress ? { localAddress } : {}),
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': MODERN,
          'mcp-method': message.method,
          ...(message.params?.name ? { 'mcp-name': message.params.name } : {}),
          ...headers,
        },
      },
      (res) => {
        res.setEncoding('utf8');
        res.on('error', () => {});
        res.once('data', (chunk: string) => resolve({ status: res.statusCode ?? 0, first: chunk, close: () => req?.destroy() }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

const listenBody = { jsonrpc: '2.0', id: 7, method: 'subscriptions/listen', params: { _meta: ENVELOPE, notifications: { toolsListChanged: true } } };

function isAck(answer: Answer): boolean {
  return answer.status === 200 && answer.first.includes('notifications/subscriptions/acknowledged');
}

function refusalOf(answer: Answer): { id: unknown; error: { code: number; data: { reason: string; scope: string; limit: number } } } {
  return JSON.parse(answer.first) as { id: unknown; error: { code: number; data: { reason: string; scope: string; limit: number } } };
}

describe('modern leg: subscriptions/listen slots per client and per process', () => {
  let listener: Listener;
  const open: Answer[] = [];
  before(async () => {
    const endpoint = createEndpoint({
      server: () => createExampleServer(),
      modern: createExampleHandler(),
      limits: { maxListensPerClient: 2, maxListens: 5 },
    });
    listener = await listen(endpoint, { port: 0, principal: (req) => req.headers['x-user'] as string | undefined });
  });
  after(async () => {
    for (const a of open) a.close();
    await listener.close();
  });

  test("one principal's listens past its share are refused (429 listen-limit, scope client); another principal still gets a slot", async () => {
    for (let i = 0; i < 2; i++) {
      const a = await post(listener.url, listenBody, { 'x-user': 'alice' });
      open.push(a);
      assert.ok(isAck(a), `alice's listen ${i + 1} is acknowledged: ${a.status} ${a.first}`);
    }
    const refused = await post(listener.url, listenBody, { 'x-user': 'alice' });
    assert.equal(refused.status, 429, refused.first);
    const wire = refusalOf(refused);
    assert.equal(wire.id, 7, 'the refusal answers the listen request');
    assert.equal(wire.error.code, -32000);
    assert.deepEqual(
      { reason: wire.error.data.reason, scope: wire.error.data.scope, limit: wire.error.data.limit },
      { reason: 'listen-limit', scope: 'client', limit: 2 },
    );

    const bob = await post(listener.url, listenBody, { 'x-user': 'bob' });
    open.push(bob);
    assert.ok(isAck(bob), `bob still gets a slot: ${bob.status} ${bob.first}`);
  });

  test('without a principal a client is its address: one address at its share, another still gets a slot', async () => {
    for (let i = 0; i < 2; i++) {
      const a = await post(listener.url, listenBody, {}, '127.0.0.2');
      open.push(a);
      assert.ok(isAck(a), `127.0.0.2's listen ${i + 1} is acknowledged: ${a.status} ${a.first}`);
    }
    const refused = await post(listener.url, listenBody, {}, '127.0.0.2');
    assert.equal(refused.status, 429, refused.first);
    assert.equal(refusalOf(refused).error.data.scope, 'client');
    // Five of five slots are taken now (alice 2, bob 1, 127.0.0.2 2): the process bound holds.
    const full = await post(listener.url, listenBody, {}, '127.0.0.3');
    assert.equal(full.status, 429, full.first);
    assert.deepEqual(
      { reason: refusalOf(full).error.data.reason, scope: refusalOf(full).error.data.scope, limit: refusalOf(full).error.data.limit },
      { reason: 'listen-limit', scope: 'process', limit: 5 },
    );
  });

  test('a slot is given back when its stream ends: the client went away', async () => {
    const alice = open.shift() as Answer;
    alice.close();
    const again = await waitFor(async () => {
      const answer = await post(listener.url, listenBody, {}, '127.0.0.3');
      if (isAck(answer)) return answer;
      answer.close();
      return false;
    }, "a listen from 127.0.0.3 once alice's stream closed");
    open.push(again);
  });
});

describe('modern leg: requestState is bound to whoever received it', () => {
  let listener: Listener;
  const TOOL = 'test_input_required_result_request_state';
  const call = (id: number, extra: object = {}) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: TOOL, arguments: {}, _meta: ENVELOPE, ...extra },
  });
  const answerWith = (state: string) => ({ inputResponses: { confirm: { action: 'accept', content: { ok: true } } }, requestState: state });

  /** Round 1 under `headers`: the sealed state it returned. */
  async function mint(headers: Record<string, string>): Promise<string> {
    const round1 = await post(listener.url, call(1), headers);
    const body = JSON.parse(round1.first) as { result: { resultType: string; requestState: string } };
    assert.equal(body.result.resultType, 'input_required', round1.first);
    return body.result.requestState;
  }

  before(async () => {
    const endpoint = createEndpoint({ server: () => createExampleServer(), modern: createExampleHandler() });
    listener = await listen(endpoint, { port: 0, principal: (req) => req.headers['x-user'] as string | undefined });
  });
  after(() => listener.close());

  test('a state replayed under another principal is refused (-32602); the same principal still completes', async () => {
    const state = await mint({ 'x-user': 'alice' });
    const replayed = await post(listener.url, call(2, answerWith(state)), { 'x-user': 'mallory' });
    const refused = JSON.parse(replayed.first) as { error?: { code: number; message: string } };
    assert.equal(refused.error?.code, -32602, replayed.first);
    assert.doesNotMatch(replayed.first, /state-ok/);
    const anonymous = await post(listener.url, call(3, answerWith(state)));
    assert.equal((JSON.parse(anonymous.first) as { error?: { code: number } }).error?.code, -32602, anonymous.first);

    const own = await post(listener.url, call(4, answerWith(state)), { 'x-user': 'alice' });
    assert.match(own.first, /state-ok: confirmed=true/);
  });

  test('without a principal, a state replayed under another Authorization is refused; the same one completes', async () => {
    const state = await mint({ authorization: 'Bearer first' });
    const replayed = await post(listener.url, call(2, answerWith(state)), { authorization: 'Bearer second' });
    assert.equal((JSON.parse(replayed.first) as { error?: { code: number } }).error?.code, -32602, replayed.first);
    const own = await post(listener.url, call(3, answerWith(state)), { authorization: 'Bearer first' });
    assert.match(own.first, /state-ok: confirmed=true/);
  });
});
