/**
 * Every resumption refusal of DESIGN §3 over real HTTP: status, JSON-RPC body, reason,
 * and never a silent 200 / SSE stream.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { ContinuityError } from '../../src/protocol/errors.js';
import { refusal } from '../../src/server/stream/http.js';
import { startFixture, type Fixture } from '../helpers/fixture.js';
import { initialize, messages, rpc, send, sessionHeaders, type Handshake, type RawResponse } from '../helpers/sse-client.js';
import { assertRefusal, assertWebRefusal, joinId, splitId } from './refusal-assert.js';

/** A call of the example `emit` tool on its own POST stream, read to the end. */
async function emit(f: Fixture, h: Handshake, count: number, extra: Record<string, unknown> = {}): Promise<RawResponse> {
  const res = await send(f.url, {
    body: rpc('tools/call', { name: 'emit', arguments: { count, ...extra } }),
    headers: sessionHeaders(h),
    timeoutMs: 5000,
  });
  assert.equal(res.status, 200, res.text);
  const last = messages(res.events).at(-1) as { result?: { content?: Array<{ text?: string }> } } | undefined;
  assert.equal(last?.result?.content?.[0]?.text, `emitted ${count}`, 'the call completed on its stream');
  return res;
}

/** `GET` with `Last-Event-ID` on the session of `h` (or another session id). */
function resume(f: Fixture, h: Handshake, cursor: string, sessionId = h.sessionId): Promise<RawResponse> {
  return send(f.url, { headers: { ...sessionHeaders(h), 'mcp-session-id': sessionId, 'last-event-id': cursor }, timeoutMs: 3000 });
}

function randomSessionId(): string {
  return randomBytes(24).toString('base64url');
}

describe('session-not-found (404)', () => {
  let f: Fixture;
  before(async () => {
    f = await startFixture();
  });
  after(() => f.close());

  it('an unknown session id on GET, GET with a cursor, POST and DELETE', async () => {
    const h = await initialize(f.url);
    const probe = await emit(f, h, 1);
    const validCursor = probe.events.at(-1)?.id as string;
    const unknown = randomSessionId();
    const headers = { 'mcp-session-id': unknown, 'mcp-protocol-version': '2025-11-25' };

    assertRefusal(await send(f.url, { headers, timeoutMs: 3000 }), 'session-not-found', 'GET');
    assertRefusal(await send(f.url, { headers: { ...headers, 'last-event-id': validCursor }, timeoutMs: 3000 }), 'session-not-found', 'GET+cursor');
    assertRefusal(await send(f.url, { headers, body: rpc('tools/list') }), 'session-not-found', 'POST request');
    assertRefusal(await send(f.url, { headers, body: { jsonrpc: '2.0', method: 'notifications/initialized' } }), 'session-not-found', 'POST notification');
    assertRefusal(await send(f.url, { method: 'DELETE', headers }), 'session-not-found', 'DELETE');
    // Never resurrected: the unknown id did not become a session.
    assert.equal(f.endpoint.sessionCount, 1);
    assert.equal(await f.endpoint.store.sessions.get(unknown), undefined);
  });

  it('a terminated session (after DELETE) on GET, GET with a cursor, POST and DELETE', async () => {
    const h = await initialize(f.url);
    const call = await emit(f, h, 2);
    const cursor = call.events.at(-1)?.id as string;
    const del = await send(f.url, { method: 'DELETE', headers: sessionHeaders(h) });
    assert.equal(del.status, 200);

    assertRefusal(await send(f.url, { headers: sessionHeaders(h), timeoutMs: 3000 }), 'session-not-found', 'GET');
    assertRefusal(await resume(f, h, cursor), 'session-not-found', 'GET+cursor');
    assertRefusal(await send(f.url, { headers: sessionHeaders(h), body: rpc('tools/list') }), 'session-not-found', 'POST');
    assertRefusal(await send(f.url, { method: 'DELETE', headers: sessionHeaders(h) }), 'session-not-found', 'DELETE');
    assert.equal(await f.endpoint.store.sessions.get(h.sessionId), undefined, 'record deleted');
  });

  it('a session bound to a principal is invisible to another principal (and to none)', async () => {
    const { endpoint } = f;
    const url = f.url.href;
    const base = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
    const post = (body: unknown, headers: Record<string, string>, principal?: string): Promise<Response> =>
      endpoint.handle(
        new Request(url, { method: 'POST', headers: { ...base, ...headers }, body: JSON.stringify(body) }),
        principal === undefined ? {} : { principal },
      );

    const init = await post(
      rpc('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'principal-test', version: '0' } }),
      {},
      'alice',
    );
    assert.equal(init.status, 200);
    const sessionId = init.headers.get('mcp-session-id');
    assert.ok(sessionId);
    const initEvents = await readSse(init);
    assert.ok(
      initEvents.some((e) => e.data.includes('"protocolVersion"')),
      'initialize answered',
    );
    const session = { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' };
    assert.equal((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, session, 'alice')).status, 202);

    // The owner gets through.
    const own = await post(rpc('tools/call', { name: 'test_simple_text', arguments: {} }), session, 'alice');
    assert.equal(own.status, 200);
    const ownEvents = await readSse(own);
    const cursor = ownEvents.at(-1)?.id as string;
    assert.ok(cursor);

    for (const principal of ['bob', 'Alice', 'alice ', '']) {
      const what = `principal ${JSON.stringify(principal)}`;
      await assertWebRefusal(
        await endpoint.handle(new Request(url, { headers: { ...session, accept: 'text/event-stream' } }), { principal }),
        'session-not-found',
        `${what} GET`,
      );
      await assertWebRefusal(
        await endpoint.handle(new Request(url, { headers: { ...session, accept: 'text/event-stream', 'last-event-id': cursor } }), { principal }),
        'session-not-found',
        `${what} GET+cursor`,
      );
      await assertWebRefusal(await post(rpc('tools/list'), session, principal), 'session-not-found', `${what} POST`);
      await assertWebRefusal(
        await endpoint.handle(new Request(url, { method: 'DELETE', headers: session }), { principal }),
        'session-not-found',
        `${what} DELETE`,
      );
    }
    // No principal at all (the node adapter passes none): same answer, over real HTTP.
    assertRefusal(await send(f.url, { headers: session, timeoutMs: 3000 }), 'session-not-found', 'no principal GET');
    assertRefusal(await send(f.url, { headers: session, body: rpc('tools/list') }), 'session-not-found', 'no principal POST');
    assertRefusal(await send(f.url, { method: 'DELETE', headers: session }), 'session-not-found', 'no principal DELETE');

    // The failed DELETEs did not end it: the owner still resumes, and can end it.
    const again = await endpoint.handle(new Request(url, { headers: { ...session, accept: 'text/event-stream', 'last-event-id': cursor } }), {
      principal: 'alice',
    });
    assert.equal(again.status, 200);
    await again.body?.cancel();
    assert.equal((await endpoint.handle(new Request(url, { method: 'DELETE', headers: session }), { principal: 'alice' })).status, 200);
  });
});

describe('cursor-invalid (400)', () => {
  let f: Fixture;
  let a: Handshake;
  let b: Handshake;
  let aCall: RawResponse;
  let bCall: RawResponse;
  before(async () => {
    f = await startFixture();
    a = await initialize(f.url);
    b = await initialize(f.url);
    // Both sessions have a stream with the same name and the same shape.
    aCall = await emit(f, a, 3);
    bCall = await emit(f, b, 7, { bytes: 24 });
  });
  after(() => f.close());

  it('malformed Last-Event-ID in many shapes', async () => {
    const good = splitId(aCall.events.at(-1)?.id);
    const { epoch, stream, chain } = good;
    const shapes = [
      'garbage',
      '42', // an integer ID, as other servers use
      '_GET_stream_42', // SDK InMemoryEventStore style
      'a.b.c',
      `${epoch}.${stream}.3`,
      `${epoch}.${stream}.3.${chain}.extra`,
      `${epoch}.${stream}.0.${chain}`,
      `${epoch}.${stream}.03.${chain}`,
      `${epoch}.${stream}.-1.${chain}`,
      `${epoch}.${stream}.x.${chain}`,
      `${epoch}.${stream}.1e3.${chain}`,
      `${epoch}.${stream}.99999999999999999.${chain}`,
      `${epoch}.${stream}.3.${chain.slice(0, 15)}`,
      `${epoch}.${stream}.3.${chain}A`,
      `${epoch}.${stream}.3.${chain.slice(0, 15)}+`,
      `${epoch}..3.${chain}`,
      `.${stream}.3.${chain}`,
      `${'A'.repeat(44)}.${stream}.3.${chain}`,
      `${epoch}.${'s'.repeat(33)}.3.${chain}`,
      `${epoch}.${stream}.3.${chain}${'.x'.repeat(60)}`,
      'x'.repeat(200),
      '....',
    ];
    for (const shape of shapes) {
      const res = await resume(f, a, shape);
      assertRefusal(res, 'cursor-invalid', `Last-Event-ID ${JSON.stringify(shape.slice(0, 60))}`);
    }
  });

  it('a valid cursor of another session is refused and replays none of its events', async () => {
    const bPayloads = bCall.events.map((e) => e.data).filter((d) => d !== '');
    assert.ok(bPayloads.length >= 8, 'B produced payloads');
    // Every event ID B was ever given, including the stream name A also has.
    for (const event of bCall.events) {
      const res = await resume(f, a, event.id as string);
      assertRefusal(res, 'cursor-invalid', `B's ${event.id} on A`);
      for (const payload of bPayloads) assert.ok(!res.text.includes(payload), 'no B payload in A response');
      assert.ok(!res.text.includes('emitted 7'), "B's result never appears");
      assert.ok(!res.text.includes('notifications/message'), "B's notifications never appear");
      assert.notEqual(res.headers['x-mcp-replay-epoch'], b.epoch, "B's epoch is not announced to A");
    }
    // The same ids re-targeted at A's epoch do not select A's events either (chain differs).
    for (const event of bCall.events) {
      const p = splitId(event.id);
      if (p.seq > splitId(aCall.events.at(-1)?.id).seq) continue;
      const res = await resume(f, a, joinId({ ...p, epoch: a.epoch }));
      assertRefusal(res, 'cursor-invalid', `B's ${event.id} rewritten to A's epoch`);
    }
    // Control: the cursor is valid for B itself.
    const first = bCall.events[0]?.id as string;
    const own = await resume(f, b, first);
    assert.equal(own.status, 200);
    assert.deepEqual(
      own.events.map((e) => e.id),
      bCall.events.slice(1).map((e) => e.id),
    );
  });

  it("an ID of this session's epoch but an unknown stream", async () => {
    const p = splitId(aCall.events.at(-1)?.id);
    for (const stream of ['zz', 'unknown', 'A-_b']) {
      assertRefusal(await resume(f, a, joinId({ ...p, stream, seq: 1 })), 'cursor-invalid', `stream ${stream}`);
    }
  });

  it('same epoch, stream and seq but a wrong chain', async () => {
    for (const event of aCall.events) {
      const p = splitId(event.id);
      const flipped = (p.chain[0] === 'A' ? 'B' : 'A') + p.chain.slice(1);
      for (const chain of [flipped, 'AAAAAAAAAAAAAAAA', splitId(bCall.events[1]?.id).chain]) {
        if (chain === p.chain) continue;
        const res = await resume(f, a, joinId({ ...p, chain }));
        assertRefusal(res, 'cursor-invalid', `seq ${p.seq} chain ${chain}`);
      }
    }
    // Control: the true chain is honoured.
    const ok = await resume(f, a, aCall.events[1]?.id as string);
    assert.equal(ok.status, 200);
    assert.deepEqual(
      ok.events.map((e) => e.id),
      aCall.events.slice(2).map((e) => e.id),
    );
  });
});

describe('replay-epoch-mismatch (409)', () => {
  let f: Fixture;
  before(async () => {
    f = await startFixture();
  });
  after(() => f.close());

  it('every cursor of an earlier epoch of the same session, after endpoint.resetReplayLog()', async () => {
    const h = await initialize(f.url);
    const call = await emit(f, h, 3);
    const standalone = await send(f.url, { headers: sessionHeaders(h), cutWhen: () => true, timeoutMs: 3000 });
    assert.equal(standalone.status, 200);
    await f.endpoint.resetReplayLog(h.sessionId);

    const record = await f.endpoint.store.sessions.get(h.sessionId);
    assert.ok(record);
    assert.notEqual(record.epoch, h.epoch, 'the epoch rotated');
    assert.ok(record.pastEpochs.includes(h.epoch), 'the old epoch is remembered');

    const oldIds = [...call.events, ...standalone.events, ...h.response.events].map((e) => e.id as string);
    for (const id of oldIds) {
      const res = await resume(f, h, id);
      assertRefusal(res, 'replay-epoch-mismatch', `cursor ${id}`);
      assert.ok(!res.text.includes('emitted 3'), 'nothing of the old log is replayed');
    }
    // New SSE responses announce the new epoch.
    const fresh = await send(f.url, { body: rpc('tools/call', { name: 'test_simple_text', arguments: {} }), headers: sessionHeaders(h) });
    assert.equal(fresh.status, 200);
    assert.equal(fresh.headers['x-mcp-replay-epoch'], record.epoch);
    assert.ok(fresh.events.every((e) => splitId(e.id).epoch === record.epoch));
  });

  it('a cursor of a request stream that was running when the log was reset', async () => {
    const h = await initialize(f.url);
    const cut = await send(f.url, {
      body: rpc('tools/call', { name: 'emit', arguments: { count: 4, intervalMs: 100 } }),
      headers: sessionHeaders(h),
      cutWhen: (_e, all) => all.length === 2,
      timeoutMs: 3000,
    });
    assert.equal(cut.events.length, 2);
    await f.endpoint.resetReplayLog(h.sessionId);
    for (const event of cut.events) {
      assertRefusal(await resume(f, h, event.id as string), 'replay-epoch-mismatch', `live cursor ${event.id}`);
    }
    // Rewriting the old cursor under the new epoch proves nothing either.
    const record = await f.endpoint.store.sessions.get(h.sessionId);
    assert.ok(record);
    const p = splitId(cut.events[1]?.id);
    const res = await resume(f, h, joinId({ ...p, epoch: record.epoch }));
    assert.notEqual(res.status, 200, `old position under the new epoch: ${res.text}`);
    assert.equal(res.events.length, 0);
  });
});

describe('replay-window-exceeded (410)', () => {
  it('a cursor older than what retention kept (maxEvents: 20)', async (t) => {
    const f = await startFixture({ retention: { maxEvents: 20 } });
    t.after(() => f.close());
    const h = await initialize(f.url);
    const call = await emit(f, h, 100);
    const ids = call.events.map((e) => e.id as string);
    assert.equal(ids.length, 102, 'priming + 100 notifications + result, all delivered live');
    const lastSeq = splitId(ids.at(-1)).seq;
    const firstKept = lastSeq - 19;

    for (const seq of [1, 2, 50, firstKept - 2]) {
      const res = await resume(f, h, ids[seq - 1] as string);
      assertRefusal(res, 'replay-window-exceeded', `cursor seq ${seq}`);
      assert.ok(!res.text.includes('emitted 100'));
    }
    // Control: the oldest cursor still provable (the event just before the window) replays exactly the window.
    const edge = await resume(f, h, ids[firstKept - 2] as string);
    assert.equal(edge.status, 200, edge.text);
    assert.deepEqual(
      edge.events.map((e) => e.id),
      ids.slice(firstKept - 1),
    );
  });

  it('a cursor whose whole request stream was dropped by limits.maxStreamsPerSession', async (t) => {
    const f = await startFixture({ limits: { maxStreamsPerSession: 2 } });
    t.after(() => f.close());
    const h = await initialize(f.url); // stream 1: initialize
    const first = await emit(f, h, 2); // stream 2
    const cursor = first.events[1]?.id as string;
    const valid = await resume(f, h, cursor);
    assert.equal(valid.status, 200, 'the cursor is valid while its stream is kept');
    assert.deepEqual(
      valid.events.map((e) => e.id),
      first.events.slice(2).map((e) => e.id),
    );

    await emit(f, h, 1); // stream 3: drops stream 1
    const last = await emit(f, h, 1); // stream 4: drops stream 2
    for (const event of first.events) {
      const res = await resume(f, h, event.id as string);
      assertRefusal(res, 'replay-window-exceeded', `dropped stream cursor ${event.id}`);
      assert.ok(!res.text.includes('emitted 2'));
    }
    // The initialize stream went first.
    const initCursor = h.response.events.at(-1)?.id as string;
    assertRefusal(await resume(f, h, initCursor), 'replay-window-exceeded', 'initialize stream');
    // Control: a kept stream still resumes.
    const kept = await resume(f, h, last.events[0]?.id as string);
    assert.equal(kept.status, 200);
    assert.deepEqual(
      kept.events.map((e) => e.id),
      last.events.slice(1).map((e) => e.id),
    );
  });
});

describe('cursor-ahead (409)', () => {
  let f: Fixture;
  before(async () => {
    f = await startFixture();
  });
  after(() => f.close());

  it('a cursor beyond the last event of a completed request stream', async () => {
    const h = await initialize(f.url);
    const call = await emit(f, h, 2);
    const last = splitId(call.events.at(-1)?.id);
    for (const seq of [last.seq + 1, last.seq + 2, 1000, 9_007_199_254_740_991]) {
      for (const chain of [last.chain, 'AAAAAAAAAAAAAAAA', 'zzzzzzzzzzzzzzz_']) {
        const res = await resume(f, h, joinId({ ...last, seq, chain }));
        assertRefusal(res, 'cursor-ahead', `seq ${seq}`);
      }
    }
  });

  it('a cursor beyond the standalone stream', async () => {
    const h = await initialize(f.url);
    const p = { epoch: h.epoch, stream: '0', chain: 'AAAAAAAAAAAAAAAA' };
    // Nothing was ever sent on stream 0.
    assertRefusal(await resume(f, h, joinId({ ...p, seq: 1 })), 'cursor-ahead', 'empty standalone');
    // After a GET (2025-11-25: one priming event), seq 2 is ahead.
    const get = await send(f.url, { headers: sessionHeaders(h), cutWhen: () => true, timeoutMs: 3000 });
    assert.equal(get.status, 200);
    assert.equal(splitId(get.events[0]?.id).seq, 1);
    assertRefusal(await resume(f, h, joinId({ ...p, seq: 2 })), 'cursor-ahead', 'standalone after priming');
  });

  it('a cursor beyond a live (still running) request stream', async () => {
    const h = await initialize(f.url);
    const running = send(f.url, {
      body: rpc('tools/call', { name: 'emit', arguments: { count: 3, intervalMs: 150 } }),
      headers: sessionHeaders(h),
      cutWhen: (_e, all) => all.length === 1,
      timeoutMs: 3000,
    });
    const cut = await running;
    const p = splitId(cut.events[0]?.id);
    assertRefusal(await resume(f, h, joinId({ ...p, seq: 50 })), 'cursor-ahead', 'live stream');
    // Control: the valid cursor resumes the live stream with exactly the events after it.
    const rest = await resume(f, h, cut.events[0]?.id as string);
    assert.equal(rest.status, 200);
    const seqs = rest.events.map((e) => splitId(e.id).seq);
    assert.deepEqual(seqs, [2, 3, 4, 5], 'logs 1-3 (seq 2-4) and the result (seq 5): no gap, nothing twice');
    const last = messages(rest.events).at(-1) as { result?: { content?: Array<{ text?: string }> } } | undefined;
    assert.equal(last?.result?.content?.[0]?.text, 'emitted 3');
  });
});

describe('session-superseded (410)', () => {
  let f: Fixture;
  before(async () => {
    f = await startFixture({ upgrade: { websocket: true } });
  });
  after(() => f.close());

  it('GET with Last-Event-ID while an upgrade is pending', async () => {
    const h = await initialize(f.url);
    // Ask for the offer, read until it arrives, then drop the stream (the half-upgraded window).
    const offered = await send(f.url, {
      headers: sessionHeaders(h, { 'x-mcp-upgrade': 'websocket' }),
      cutWhen: (e) => e.data.includes('upgrade-accepted'),
    });
    const cursor = offered.events.at(-1)?.id as string;
    assert.ok(offered.events.at(-1)?.data.includes('upgrade-accepted'), 'the offer arrived');
    assertRefusal(await resume(f, h, cursor), 'session-superseded', 'resume in upgrade-pending');
    // Terminated, not merely refused: the session is gone.
    assertRefusal(await resume(f, h, cursor), 'session-not-found', 'after the refusal');
  });
});

/** Reads a whole in-process SSE response body. */
async function readSse(res: Response): Promise<EventSourceMessage[]> {
  const events: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (e) => events.push(e) });
  parser.feed(await res.text());
  return events;
}

describe('what a refusal tells the client about the server side', () => {
  it("a store's or an internal error's own words stay on the server: the client gets the table's message, the reason and the detail", async () => {
    const cases = [
      new ContinuityError('store-unavailable', 'Redis store unavailable (EVALSHA): OOM command not allowed, script: 5de01d, on @user_script:51.', {
        attempt: 3,
      }),
      new ContinuityError('store-conflict', 'seq 7 after 9 in mcpc:{s}:stream:x'),
      new ContinuityError('store-locked', 'Store file /var/lib/app/secret.db is in use'),
      new ContinuityError('internal-error', 'TypeError at /srv/app/node_modules/x.js:1'),
    ];
    for (const error of cases) {
      const response = refusal(error, 4);
      const text = await response.text();
      const body = JSON.parse(text) as { id: unknown; error: { message: string; data: Record<string, unknown> } };
      assert.equal(response.status, error.status, error.code);
      assert.equal(body.id, 4);
      assert.equal(body.error.message, new ContinuityError(error.code).message, error.code);
      assert.deepEqual(body.error.data, { ...error.detail, reason: error.code });
      assert.doesNotMatch(text, /Redis|EVALSHA|script|mcpc:|secret|node_modules/, error.code);
    }
    // A refusal about the request itself keeps its specific message.
    const bad = new ContinuityError('invalid-request', 'Invalid Request: a batch may not be empty');
    assert.equal((JSON.parse(await refusal(bad).text()) as { error: { message: string } }).error.message, bad.message);
  });
});
