/**
 * HTTP-level validation of the Streamable HTTP endpoint over real sockets: media types,
 * JSON-RPC shape, batches per revision, sessions, protocol versions, body limits, methods,
 * Host/Origin, session limits, in-flight ids, the handshake headers, priming and DELETE.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.js';
import { initialize, messages, readUntilSentinel, rpc, send, sessionHeaders, type Handshake, type RawResponse } from '../helpers/sse-client.js';
import { assertRefusal, splitId } from './refusal-assert.js';
import { waitFor, within } from '../helpers/wait.js';

const INITIALIZED = { jsonrpc: '2.0', method: 'notifications/initialized' } as const;

function initRequest(protocolVersion = '2025-11-25', id?: number): Record<string, unknown> {
  return rpc('initialize', { protocolVersion, capabilities: {}, clientInfo: { name: 'validation-test', version: '0' } }, id);
}

function simpleText(id?: number): Record<string, unknown> {
  return rpc('tools/call', { name: 'test_simple_text', arguments: {} }, id);
}

function header(res: RawResponse, name: string): string | undefined {
  const v = res.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

/** Sends `chunks` as separate writes of a chunked request (no Content-Length). */
function sendChunked(
  url: URL,
  chunks: string[],
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string; chunked: boolean }> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = httpRequest(url, { method: 'POST', headers }, (res) => {
      answered = true;
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, chunked: req.chunkedEncoding && req.getHeader('content-length') === undefined }),
      );
      res.on('error', reject);
    });
    // The server may answer and close before it read everything we wrote: that is the point.
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    for (const c of chunks) req.write(c);
    req.end();
  });
}

describe('media types (406, 415)', () => {
  let f: Fixture;
  let h: Handshake;
  before(async () => {
    f = await startFixture();
    h = await initialize(f.url);
  });
  after(() => f.close());

  it('POST without both application/json and text/event-stream in Accept → 406', async () => {
    for (const accept of ['application/json', 'text/event-stream', 'text/html', 'application/xml, text/plain']) {
      assertRefusal(await send(f.url, { body: initRequest(), headers: { accept } }), 'not-acceptable', `initialize Accept: ${accept}`);
      assertRefusal(await send(f.url, { body: simpleText(), headers: sessionHeaders(h, { accept }) }), 'not-acceptable', `POST Accept: ${accept}`);
    }
    assert.equal(f.endpoint.sessionCount, 1, 'no session was created by a refused initialize');
  });

  it('GET without text/event-stream in Accept → 406', async () => {
    for (const accept of ['application/json', 'text/html', 'application/json, text/plain']) {
      assertRefusal(await send(f.url, { headers: sessionHeaders(h, { accept }), timeoutMs: 3000 }), 'not-acceptable', `GET Accept: ${accept}`);
    }
  });

  it('POST with a Content-Type other than application/json → 415', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'text/json', 'application/jsonx', 'multipart/form-data; boundary=x']) {
      const res = await send(f.url, { body: JSON.stringify(simpleText()), headers: sessionHeaders(h, { 'content-type': type }) });
      assertRefusal(res, 'unsupported-media-type', `Content-Type: ${type}`);
    }
    // Parameters on application/json are fine.
    const ok = await send(f.url, { body: simpleText(), headers: sessionHeaders(h, { 'content-type': 'application/json; charset=utf-8' }) });
    assert.equal(ok.status, 200, ok.text);
  });
});

describe('JSON-RPC bodies and batches', () => {
  let f: Fixture;
  before(async () => {
    f = await startFixture();
  });
  after(() => f.close());

  it('invalid JSON → 400 parse-error (-32700)', async () => {
    const h = await initialize(f.url);
    for (const body of ['{', '{"jsonrpc":"2.0",', 'not json', '', '[1,]']) {
      assertRefusal(await send(f.url, { body, headers: sessionHeaders(h) }), 'parse-error', `body ${JSON.stringify(body)}`);
    }
    // Before any session exists, too.
    assertRefusal(await send(f.url, { body: '{"jsonrpc":"2.0","method":"initialize"' }), 'parse-error', 'broken initialize');
  });

  it('a body that is not JSON-RPC 2.0 → 400 invalid-request', async () => {
    const h = await initialize(f.url);
    const bodies: unknown[] = [
      { foo: 1 },
      42,
      'a string',
      null,
      { jsonrpc: '1.0', id: 1, method: 'tools/list' },
      { id: 1, method: 'tools/list' },
      { jsonrpc: '2.0', id: 1 },
      { jsonrpc: '2.0', id: { x: 1 }, method: 'tools/list' },
      { jsonrpc: '2.0', id: 1, method: 'tools/list', params: 'x' },
      { jsonrpc: '2.0', id: 1, result: {}, error: { code: 1, message: 'x' } },
    ];
    for (const body of bodies) {
      assertRefusal(await send(f.url, { body: JSON.stringify(body), headers: sessionHeaders(h) }), 'invalid-request', JSON.stringify(body));
    }
  });

  // The endpoint's classifier accepts these as requests, but the SDK's strict schemas
  // (JSONRPCRequestSchema is .strict(), ids must be integers or strings, params an object)
  // do not: the SDK drops them with onerror('Unknown message type') and never answers.
  // Whatever the endpoint does, a request it accepted must not be left without an answer.
  const unreadable: Array<[string, Record<string, unknown>]> = [
    ['an extra top-level member', { ...simpleText(6001), extra: true }],
    ['a fractional id', { jsonrpc: '2.0', id: 1.5, method: 'tools/list', params: {} }],
    ['array params', { jsonrpc: '2.0', id: 6002, method: 'tools/list', params: [] }],
  ];
  for (const [what, body] of unreadable) {
    it(`a request the SDK cannot read (${what}) is refused with 400 or answered with an error — never left hanging`, async () => {
      const h = await initialize(f.url);
      const id = body.id;
      const started = Date.now();
      const res = await send(f.url, { body, headers: sessionHeaders(h), timeoutMs: 30_000 });
      if (res.status === 200) {
        const answer = messages(res.events).find((m) => m.id === id && !('method' in m));
        assert.ok(
          answer,
          `${what}: 200 stream with no answer for id ${String(id)} after ${Date.now() - started} ms (hangs; events: ${JSON.stringify(res.events)})`,
        );
        assert.ok('error' in answer, `${what}: answered with a JSON-RPC error`);
      } else {
        assertRefusal(res, 'invalid-request', what);
      }
    });
  }

  it('an empty batch → 400', async () => {
    const h = await initialize(f.url, '2025-03-26');
    assertRefusal(await send(f.url, { body: [], headers: { 'mcp-session-id': h.sessionId } }), 'invalid-request', 'empty batch');
    assertRefusal(await send(f.url, { body: [] }), 'invalid-request', 'empty batch, no session');
  });

  it('a batch containing initialize → 400', async () => {
    const count = f.endpoint.sessionCount;
    assertRefusal(await send(f.url, { body: [initRequest('2025-03-26')] }), 'invalid-request', 'batch [initialize]');
    assertRefusal(await send(f.url, { body: [initRequest('2025-03-26'), INITIALIZED] }), 'invalid-request', 'batch [initialize, initialized]');
    assert.equal(f.endpoint.sessionCount, count, 'no session created');
  });

  for (const version of ['2025-06-18', '2025-11-25']) {
    it(`a batch on a ${version} session → 400 batch-unsupported`, async () => {
      const h = await initialize(f.url, version);
      assert.equal(h.protocolVersion, version);
      const res = await send(f.url, { body: [simpleText(), rpc('tools/list')], headers: sessionHeaders(h) });
      assertRefusal(res, 'batch-unsupported', version);
      assertRefusal(await send(f.url, { body: [INITIALIZED], headers: sessionHeaders(h) }), 'batch-unsupported', `${version} notification batch`);
      // The refused ids are not left in flight: the same ids go through alone.
      const ok = await send(f.url, { body: simpleText(), headers: sessionHeaders(h) });
      assert.equal(ok.status, 200, ok.text);
    });
  }

  it('a batch on a 2025-03-26 session: one response per request on one SSE stream, which then closes', async () => {
    const h = await initialize(f.url, '2025-03-26');
    assert.equal(h.protocolVersion, '2025-03-26');
    const res = await send(f.url, {
      // 2025-03-26 has no MCP-Protocol-Version header.
      headers: { 'mcp-session-id': h.sessionId },
      body: [
        rpc('tools/call', { name: 'test_simple_text', arguments: {} }, 9001),
        rpc('tools/list', {}, 9002),
        { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 12345, reason: 'none' } },
        rpc('tools/call', { name: 'emit', arguments: { count: 2 } }, 9003),
      ],
      timeoutMs: 30_000,
    });
    assert.equal(res.status, 200, res.text);
    assert.match(String(header(res, 'content-type')), /^text\/event-stream/);
    assert.equal(res.timedOut, false, 'the stream ended by itself once every request was answered');
    const all = messages(res.events);
    const responses = all.filter((m) => 'id' in m && !('method' in m));
    assert.deepEqual(responses.map((m) => m.id).sort(), [9001, 9002, 9003], 'exactly one response per request');
    for (const r of responses) assert.ok('result' in r, `response ${String(r.id)} is a result: ${JSON.stringify(r)}`);
    assert.equal(all.filter((m) => m.method === 'notifications/message').length, 2, "emit's notifications ride the same stream");
    assert.ok(
      res.events.every((e) => e.data !== ''),
      'no priming event on 2025-03-26',
    );
    const seqs = res.events.map((e) => splitId(e.id).seq);
    assert.deepEqual(
      seqs,
      seqs.map((_s, i) => i + 1),
      'one stream, contiguous',
    );
  });

  it('a batch with a duplicated id on a 2025-03-26 session → 400 duplicate-request-id', async () => {
    const h = await initialize(f.url, '2025-03-26');
    const res = await send(f.url, { headers: { 'mcp-session-id': h.sessionId }, body: [rpc('tools/list', {}, 77), rpc('tools/list', {}, 77)] });
    assertRefusal(res, 'duplicate-request-id', 'batch');
  });

  it('a notification-only POST → 202 with an empty body', async () => {
    const h = await initialize(f.url);
    const res = await send(f.url, { body: INITIALIZED, headers: sessionHeaders(h) });
    assert.equal(res.status, 202);
    assert.equal(res.text, '');
    assert.equal(res.events.length, 0);
    // A notification batch on 2025-03-26, likewise.
    const old = await initialize(f.url, '2025-03-26');
    const batch = await send(f.url, { body: [INITIALIZED, INITIALIZED], headers: { 'mcp-session-id': old.sessionId } });
    assert.equal(batch.status, 202);
    assert.equal(batch.text, '');
  });
});

describe('sessions and protocol versions', () => {
  let f: Fixture;
  before(async () => {
    f = await startFixture();
  });
  after(() => f.close());

  it('no Mcp-Session-Id on a non-initialize POST, a GET or a DELETE → 400 session-required', async () => {
    await initialize(f.url);
    assertRefusal(await send(f.url, { body: simpleText() }), 'session-required', 'POST request');
    assertRefusal(await send(f.url, { body: INITIALIZED }), 'session-required', 'POST notification');
    assertRefusal(await send(f.url, { timeoutMs: 3000 }), 'session-required', 'GET');
    assertRefusal(await send(f.url, { headers: { 'last-event-id': 'x.1.1.AAAAAAAAAAAAAAAA' }, timeoutMs: 3000 }), 'session-required', 'GET+cursor');
    assertRefusal(await send(f.url, { method: 'DELETE' }), 'session-required', 'DELETE');
    assertRefusal(await send(f.url, { body: simpleText(), headers: { 'mcp-session-id': '' } }), 'session-required', 'empty Mcp-Session-Id');
  });

  it('an unsupported MCP-Protocol-Version → 400 protocol-version-unsupported', async () => {
    const h = await initialize(f.url);
    for (const version of ['2099-01-01', '2024-11-05', '2026-07-28', 'latest']) {
      const headers = sessionHeaders(h, { 'mcp-protocol-version': version });
      assertRefusal(await send(f.url, { body: simpleText(), headers }), 'protocol-version-unsupported', `POST ${version}`);
      assertRefusal(await send(f.url, { headers, timeoutMs: 3000 }), 'protocol-version-unsupported', `GET ${version}`);
      assertRefusal(await send(f.url, { method: 'DELETE', headers }), 'protocol-version-unsupported', `DELETE ${version}`);
    }
    // The session survived the refused DELETEs.
    const ok = await send(f.url, { body: simpleText(), headers: sessionHeaders(h) });
    assert.equal(ok.status, 200);
  });

  it('an initialize the SDK refuses (invalid params) is answered with its error, and leaves no session', async () => {
    for (const jsonResponse of [false, true]) {
      const g = await startFixture({ jsonResponse });
      try {
        for (const params of [{ protocolVersion: 5, capabilities: 'x', clientInfo: null }, undefined]) {
          const res = await send(g.url, { body: { jsonrpc: '2.0', id: 41, method: 'initialize', ...(params ? { params } : {}) } });
          assert.equal(res.status, 200, res.text);
          const answers = jsonResponse ? [res.json() as Record<string, unknown>] : messages(res.events);
          assert.equal(answers.length, 1, `one answer (${jsonResponse ? 'JSON' : 'SSE'}): ${res.text}`);
          assert.equal(answers[0]?.id, 41);
          assert.ok(answers[0]?.error, `an error: ${res.text}`);
          await waitFor(() => g.endpoint.sessionCount === 0, 'the refused session to end');
          const id = header(res, 'mcp-session-id');
          assert.ok(id);
          assertRefusal(
            await send(g.url, { body: simpleText(), headers: { 'mcp-session-id': id, 'mcp-protocol-version': '2025-11-25' } }),
            'session-not-found',
            'the refused session',
          );
        }
      } finally {
        await g.close();
      }
    }
  });

  it('the initialize response carries Mcp-Session-Id (≥ 128 bits, visible ASCII) and X-MCP-Replay-Epoch', async () => {
    const ids = new Set<string>();
    for (const version of ['2025-03-26', '2025-06-18', '2025-11-25']) {
      const h = await initialize(f.url, version);
      const res = h.response;
      assert.equal(res.status, 200);
      const id = header(res, 'mcp-session-id');
      assert.ok(id, 'Mcp-Session-Id present');
      assert.match(id, /^[\x21-\x7e]+$/, 'visible ASCII');
      assert.match(id, /^[A-Za-z0-9_-]{22,}$/, 'at least 22 base64url characters (≥ 128 bits)');
      ids.add(id);
      const epoch = header(res, 'x-mcp-replay-epoch');
      assert.ok(epoch, 'X-MCP-Replay-Epoch present');
      assert.match(epoch, /^[A-Za-z0-9_-]+$/);
      assert.equal(splitId(res.events.at(-1)?.id).epoch, epoch, 'event ids carry the announced epoch');
      const result = messages(res.events).at(-1) as { result?: { protocolVersion?: string } };
      assert.equal(result.result?.protocolVersion, version);
    }
    assert.equal(ids.size, 3, 'distinct session ids');
  });

  it('every SSE response carries X-MCP-Replay-Epoch (POST, GET, resume) and the session id', async () => {
    for (const version of ['2025-03-26', '2025-11-25']) {
      const h = await initialize(f.url, version);
      const post = await send(f.url, { body: simpleText(), headers: sessionHeaders(h) });
      const get = await send(f.url, { headers: sessionHeaders(h), cutWhen: () => true, timeoutMs: 200 });
      const resumed = await send(f.url, { headers: sessionHeaders(h, { 'last-event-id': post.events[0]?.id as string }), timeoutMs: 3000 });
      const resumedInit = await send(f.url, { headers: sessionHeaders(h, { 'last-event-id': h.response.events.at(-1)?.id as string }), timeoutMs: 3000 });
      for (const [what, res] of [
        ['initialize', h.response],
        ['POST', post],
        ['GET', get],
        ['resume', resumed],
        ['resume at end', resumedInit],
      ] as const) {
        assert.equal(res.status, 200, `${version} ${what}: ${res.text}`);
        assert.match(String(header(res, 'content-type')), /^text\/event-stream/, `${version} ${what}`);
        assert.equal(header(res, 'x-mcp-replay-epoch'), h.epoch, `${version} ${what}: epoch header`);
        assert.equal(header(res, 'mcp-session-id'), h.sessionId, `${version} ${what}: session header`);
      }
    }
  });

  it('2025-11-25: a POST stream starts with a priming event (id, empty data) and a retry: field', async (t) => {
    const g = await startFixture({ retryMs: 1234 });
    t.after(() => g.close());
    const h = await initialize(g.url, '2025-11-25');
    const res = await send(g.url, { body: simpleText(), headers: sessionHeaders(h) });
    assert.equal(res.status, 200);
    const [first, second] = res.events;
    assert.ok(first && second);
    assert.equal(first.data, '', 'priming event has empty data');
    assert.ok(first.id, 'priming event has an id');
    assert.deepEqual(splitId(first.id), { ...splitId(first.id), epoch: h.epoch, seq: 1 });
    assert.equal(res.retry, 1234, 'retry: field sent');
    assert.match(res.text, /^retry: ?1234$/m);
    assert.ok(JSON.parse(second.data).result, 'then the response');
    assert.equal(splitId(second.id).seq, 2);
    // The standalone GET stream is primed as well.
    const get = await send(g.url, { headers: sessionHeaders(h), cutWhen: () => true, timeoutMs: 3000 });
    assert.equal(get.events[0]?.data, '');
    assert.equal(splitId(get.events[0]?.id).stream, '0');
    assert.equal(get.retry, 1234);
  });

  for (const version of ['2025-03-26', '2025-06-18']) {
    it(`${version}: no priming event and no retry: field`, async () => {
      const h = await initialize(f.url, version);
      const headers = version === '2025-03-26' ? { 'mcp-session-id': h.sessionId } : sessionHeaders(h);
      const res = await send(f.url, { body: simpleText(), headers });
      assert.equal(res.status, 200);
      assert.equal(res.events.length, 1, 'only the response');
      assert.notEqual(res.events[0]?.data, '');
      assert.ok(JSON.parse(res.events[0]?.data ?? '{}').result);
      assert.equal(res.retry, undefined);
      assert.doesNotMatch(res.text, /^retry:/m);
      // Everything the stream sends before a sentinel sent after it opened: nothing.
      const { response: get, before } = await readUntilSentinel(f.url, headers, headers);
      assert.equal(get.status, 200);
      assert.equal(before.length, 0, 'no priming on the standalone stream');
      assert.doesNotMatch(get.text, /^retry:/m);
    });
  }

  it('DELETE → 200, then 404', async () => {
    const h = await initialize(f.url);
    const del = await send(f.url, { method: 'DELETE', headers: sessionHeaders(h) });
    assert.equal(del.status, 200);
    assertRefusal(await send(f.url, { method: 'DELETE', headers: sessionHeaders(h) }), 'session-not-found', 'second DELETE');
    assertRefusal(await send(f.url, { body: simpleText(), headers: sessionHeaders(h) }), 'session-not-found', 'POST after DELETE');
    assertRefusal(await send(f.url, { headers: sessionHeaders(h), timeoutMs: 3000 }), 'session-not-found', 'GET after DELETE');
  });

  it('DELETE ends an open standalone stream', async () => {
    const h = await initialize(f.url, '2025-06-18');
    // Open the GET and wait for its headers: the stream is open on the server.
    const { status, ended } = await within(
      new Promise<{ status: number; ended: Promise<void> }>((resolve, reject) => {
        const req = httpRequest(f.url, { method: 'GET', headers: { accept: 'text/event-stream', ...sessionHeaders(h) } }, (res) => {
          res.resume();
          resolve({ status: res.statusCode ?? 0, ended: new Promise((done) => res.once('close', () => done())) });
        });
        req.once('error', reject);
        req.end();
      }),
      'the standalone stream to open',
    );
    assert.equal(status, 200);
    assert.equal((await send(f.url, { method: 'DELETE', headers: sessionHeaders(h) })).status, 200);
    await within(ended, 'the GET stream to end with the session');
  });
});

describe('request limits', () => {
  let f: Fixture;
  before(async () => {
    f = await startFixture({ limits: { maxBodyBytes: 1024 } });
  });
  after(() => f.close());

  it('a body over limits.maxBodyBytes with an honest Content-Length → 413', async () => {
    const h = await initialize(f.url);
    const big = JSON.stringify(rpc('tools/call', { name: 'test_simple_text', arguments: { pad: 'x'.repeat(4000) } }));
    const res = await send(f.url, { body: big, headers: sessionHeaders(h, { 'content-length': String(Buffer.byteLength(big)) }) });
    assertRefusal(res, 'body-too-large', 'Content-Length');
    const init = JSON.stringify(initRequest('2025-11-25'));
    const padded = init.slice(0, -1) + `,"pad":"${'y'.repeat(2000)}"}`;
    const res2 = await send(f.url, { body: padded, headers: { 'content-length': String(Buffer.byteLength(padded)) } });
    assertRefusal(res2, 'body-too-large', 'initialize, Content-Length');
  });

  it('an answer over limits.maxEventBytes still answers its request, with event-too-large; a notification over it fails its sender', async () => {
    const g = await startFixture({ limits: { maxEventBytes: 3000 } });
    try {
      const h = await initialize(g.url);
      // tools/list lists every example tool: far more than 3,000 bytes.
      const listed = messages((await send(g.url, { body: rpc('tools/list', {}, 71), headers: sessionHeaders(h) })).events);
      const answer = listed.find((m) => m.id === 71) as { error?: { data?: { reason?: string; limit?: number } } } | undefined;
      assert.equal(answer?.error?.data?.reason, 'event-too-large', JSON.stringify(listed).slice(0, 300));
      assert.equal(answer?.error?.data?.limit, 3000);
      // emit's 5,000-byte log message cannot be sent: the tool fails, the call is answered.
      const emitted = messages(
        (await send(g.url, { body: rpc('tools/call', { name: 'emit', arguments: { count: 1, bytes: 5000 } }, 72), headers: sessionHeaders(h) })).events,
      );
      const result = emitted.find((m) => m.id === 72) as { result?: { isError?: boolean } } | undefined;
      assert.equal(result?.result?.isError, true, JSON.stringify(emitted).slice(0, 300));
      assert.ok(!emitted.some((m) => m.method === 'notifications/message'), 'the oversized notification was not sent');
    } finally {
      await g.close();
    }
  });

  it('a body over limits.maxBodyBytes sent chunked without Content-Length → 413', async () => {
    const h = await initialize(f.url);
    const big = JSON.stringify(rpc('tools/call', { name: 'test_simple_text', arguments: { pad: 'x'.repeat(4000) } }));
    const chunks: string[] = [];
    for (let i = 0; i < big.length; i += 300) chunks.push(big.slice(i, i + 300));
    const res = await sendChunked(f.url, chunks, { ...sessionHeaders(h), 'content-type': 'application/json', accept: 'application/json, text/event-stream' });
    assert.ok(res.chunked);
    const type = res.headers['content-type'];
    assertRefusal(
      { status: res.status, headers: res.headers, events: [], text: res.text, json: () => JSON.parse(res.text), retry: undefined, timedOut: false },
      'body-too-large',
      `chunked (${String(type)})`,
    );
  });

  it('a body at the limit passes', async () => {
    const h = await initialize(f.url);
    const bare = JSON.stringify(rpc('tools/call', { name: 'test_simple_text', arguments: { pad: '' } }, 5150));
    const padded = JSON.stringify(rpc('tools/call', { name: 'test_simple_text', arguments: { pad: 'z'.repeat(1024 - bare.length) } }, 5150));
    assert.equal(Buffer.byteLength(padded), 1024);
    const res = await send(f.url, { body: padded, headers: sessionHeaders(h), timeoutMs: 3000 });
    assert.equal(res.status, 200, res.text);
    assert.equal((messages(res.events).at(-1) as { id?: unknown }).id, 5150, 'answered');
    const over = JSON.stringify(rpc('tools/call', { name: 'test_simple_text', arguments: { pad: 'z'.repeat(1025 - bare.length) } }, 5151));
    assertRefusal(await send(f.url, { body: over, headers: sessionHeaders(h) }), 'body-too-large', '1025 bytes');
  });
});

describe('methods, Host and Origin', () => {
  let f: Fixture;
  let h: Handshake;
  before(async () => {
    f = await startFixture();
    h = await initialize(f.url);
  });
  after(() => f.close());

  it('PUT and PATCH → 405 with an Allow header', async () => {
    for (const method of ['PUT', 'PATCH']) {
      for (const headers of [sessionHeaders(h), {}]) {
        const res = await send(f.url, { method, body: simpleText(), headers });
        assertRefusal(res, 'method-not-allowed', method);
        const allow = String(header(res, 'allow'))
          .split(',')
          .map((s) => s.trim())
          .sort();
        assert.deepEqual(allow, ['DELETE', 'GET', 'POST']);
      }
    }
  });

  it('a Host that is not a loopback name with our port → 403 host-forbidden', async () => {
    const port = f.listener.port;
    for (const host of ['evil.example', `evil.example:${port}`, `localhost:${port + 1}`, `127.0.0.2:${port}`, `LOCALHOST.evil.example:${port}`]) {
      assertRefusal(await send(f.url, { body: initRequest(), headers: { host } }), 'host-forbidden', `initialize Host ${host}`);
      assertRefusal(await send(f.url, { headers: sessionHeaders(h, { host }), timeoutMs: 3000 }), 'host-forbidden', `GET Host ${host}`);
      assertRefusal(await send(f.url, { method: 'DELETE', headers: sessionHeaders(h, { host }) }), 'host-forbidden', `DELETE Host ${host}`);
    }
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `LocalHost:${port}`]) {
      const ok = await send(f.url, { body: simpleText(), headers: sessionHeaders(h, { host }) });
      assert.equal(ok.status, 200, `Host ${host}: ${ok.text}`);
    }
  });

  it('a foreign Origin → 403 origin-forbidden; the session is untouched', async () => {
    const port = f.listener.port;
    for (const origin of [
      'http://evil.example',
      `http://evil.example:${port}`,
      'null',
      `http://localhost:${port + 1}`,
      `ftp://localhost:${port}`,
      `http://localhost:${port}.evil.example`,
    ]) {
      assertRefusal(await send(f.url, { body: initRequest(), headers: { origin } }), 'origin-forbidden', `initialize Origin ${origin}`);
      assertRefusal(await send(f.url, { body: simpleText(), headers: sessionHeaders(h, { origin }) }), 'origin-forbidden', `POST Origin ${origin}`);
      assertRefusal(await send(f.url, { headers: sessionHeaders(h, { origin }), timeoutMs: 3000 }), 'origin-forbidden', `GET Origin ${origin}`);
      assertRefusal(await send(f.url, { method: 'DELETE', headers: sessionHeaders(h, { origin }) }), 'origin-forbidden', `DELETE Origin ${origin}`);
    }
    const ok = await send(f.url, { body: simpleText(), headers: sessionHeaders(h) });
    assert.equal(ok.status, 200, 'the refused DELETEs did not end the session');
  });

  it('a localhost Origin with our port passes', async () => {
    const port = f.listener.port;
    for (const origin of [`http://localhost:${port}`, `http://127.0.0.1:${port}`, `https://localhost:${port}`, `http://[::1]:${port}`]) {
      const res = await send(f.url, { body: initRequest(), headers: { origin } });
      assert.equal(res.status, 200, `Origin ${origin}: ${res.text}`);
      const post = await send(f.url, { body: simpleText(), headers: sessionHeaders(h, { origin }) });
      assert.equal(post.status, 200, `POST Origin ${origin}`);
    }
  });
});

describe('session and in-flight limits', () => {
  it('limits.maxSessions: 2 → the third initialize gets 503 session-limit', async (t) => {
    const f = await startFixture({ limits: { maxSessions: 2 } });
    t.after(() => f.close());
    const a = await initialize(f.url);
    await initialize(f.url);
    const third = await send(f.url, { body: initRequest() });
    const body = assertRefusal(third, 'session-limit', 'third initialize');
    assert.equal(header(third, 'mcp-session-id'), undefined, 'no session id handed out');
    assert.ok(body);
    assert.equal(f.endpoint.sessionCount, 2);
    // Ending one frees a slot.
    assert.equal((await send(f.url, { method: 'DELETE', headers: sessionHeaders(a) })).status, 200);
    const fourth = await send(f.url, { body: initRequest() });
    assert.equal(fourth.status, 200, fourth.text);
  });

  it('a request id already in flight in the session → 400 duplicate-request-id', async (t) => {
    const f = await startFixture();
    t.after(() => f.close());
    const h = await initialize(f.url);
    const id = 4242;
    const call = rpc('tools/call', { name: 'emit', arguments: { count: 3, intervalMs: 100 } }, id);
    const first = await send(f.url, { body: call, headers: sessionHeaders(h), cutWhen: () => true, timeoutMs: 3000 });
    assert.equal(first.status, 200);
    assertRefusal(await send(f.url, { body: rpc('tools/list', {}, id), headers: sessionHeaders(h) }), 'duplicate-request-id', 'same numeric id');
    // "4242" is another id than 4242.
    const other = await send(f.url, { body: rpc('tools/list', {}, '4242' as unknown as number), headers: sessionHeaders(h) });
    assert.equal(other.status, 200, other.text);
    // Another session may use the id.
    const h2 = await initialize(f.url);
    assert.equal((await send(f.url, { body: rpc('tools/list', {}, id), headers: sessionHeaders(h2) })).status, 200);
    // Once answered, the id is free again.
    const rest = await send(f.url, { headers: sessionHeaders(h, { 'last-event-id': first.events[0]?.id as string }), timeoutMs: 3000 });
    assert.equal(rest.status, 200);
    assert.equal((messages(rest.events).at(-1) as { id?: unknown }).id, id);
    const again = await send(f.url, { body: rpc('tools/list', {}, id), headers: sessionHeaders(h) });
    assert.equal(again.status, 200, again.text);
  });
});
