/**
 * The cluster protocol with three endpoints sharing one store object in this process
 * (memory store, in-process bus and lease table): forwarding, tailing, takeover, fencing.
 * The same protocol across real processes on Redis is in `replicas.test.ts`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { memoryStore } from '../../src/store/memory/index.js';
import { startFixture, type Fixture } from '../helpers/fixture.js';
import { initialize, messages, rpc, send, sessionHeaders } from '../helpers/sse-client.js';

describe('cluster in one process (memory store shared by three endpoints)', () => {
  const store = memoryStore();
  const replicas: Fixture[] = [];
  before(async () => {
    for (let i = 0; i < 3; i++) replicas.push(await startFixture({ store, cluster: { enabled: true, leaseMs: 300, replicaId: `r${i}` } }));
  });
  after(async () => {
    for (const r of replicas) await r.close().catch(() => {});
  });
  const at = (i: number): URL => (replicas[i] as Fixture).url;

  it('a POST on a non-owner runs on the owner and streams back through the replica reached; any replica resumes it', async () => {
    const h = await initialize(at(0));
    const call = rpc('tools/call', { name: 'emit', arguments: { count: 50, intervalMs: 0 }, _meta: { progressToken: 'p' } });
    const full = await send(at(1), { body: call, headers: sessionHeaders(h) });
    assert.equal(full.status, 200);
    const ms = messages(full.events);
    assert.equal(ms.filter((m) => m.method === 'notifications/progress').length, 50);
    assert.deepEqual((ms.at(-1) as { id: unknown }).id, call.id);
    const ids = full.events.map((e) => e.id as string);
    const seqs = ids.map((id) => Number(id.split('.')[2]));
    assert.deepEqual(
      seqs,
      seqs.map((_, i) => i + 1),
      'contiguous from 1',
    );
    // Resume after event 20 on the third replica: exactly the rest.
    const resumed = await send(at(2), { headers: sessionHeaders(h, { 'last-event-id': ids[19] as string }) });
    assert.equal(resumed.status, 200);
    assert.deepEqual(
      resumed.events.map((e) => e.id),
      ids.slice(20),
    );
    assert.equal(replicas[1]?.endpoint.sessionCount, 0, 'the non-owner holds nothing');
  });

  it('a sampling answer posted to a non-owner reaches the tool on the owner', async () => {
    const h = await initialize(at(0));
    const call = rpc('tools/call', { name: 'sample', arguments: { prompt: 'hi' } });
    let answered = false;
    const response = await send(at(1), {
      body: call,
      headers: sessionHeaders(h),
      cutWhen: (event) => {
        const m = event.data === '' ? undefined : (JSON.parse(event.data) as { method?: string; id?: number });
        if (m?.method === 'sampling/createMessage' && !answered) {
          answered = true;
          const reply = { jsonrpc: '2.0', id: m.id, result: { role: 'assistant', content: { type: 'text', text: 'from-client' }, model: 'm' } };
          void send(at(2), { body: reply, headers: sessionHeaders(h) });
        }
        return false;
      },
    });
    const last = messages(response.events).at(-1) as { result?: { content?: Array<{ text?: string }> } };
    assert.equal(last.result?.content?.[0]?.text, 'from-client');
  });

  it('a DELETE on a non-owner ends the session everywhere', async () => {
    const h = await initialize(at(0));
    const deleted = await send(at(1), { method: 'DELETE', headers: sessionHeaders(h) });
    assert.equal(deleted.status, 200);
    for (let i = 0; i < 3; i++) {
      const after = await send(at(i), { body: rpc('tools/list'), headers: sessionHeaders(h) });
      assert.equal(after.status, 404, `replica ${i}`);
    }
  });

  it('an owner that stops renewing is taken over; its unanswered request ends with request-abandoned on the tail', async () => {
    const h = await initialize(at(0));
    // A long call on the owner, tailed from replica 1.
    const call = rpc('tools/call', { name: 'emit', arguments: { count: 100000, intervalMs: 5 } });
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const tail = send(at(1), { body: call, headers: sessionHeaders(h), timeoutMs: 15_000, cutWhen: (_e, all) => (all.length === 5 && started(), false) });
    await running;
    // The owner goes quiet: it stops renewing and answering, as a dead process would.
    await (replicas[0] as Fixture).close();
    const done = await tail;
    const last = messages(done.events).at(-1) as { id?: unknown; error?: { data?: { reason?: string } } };
    assert.deepEqual(last.id, call.id);
    assert.equal(last.error?.data?.reason, 'request-abandoned');
    // The next call in the same session succeeds on another replica.
    const next = await send(at(2), { body: rpc('tools/call', { name: 'emit', arguments: { count: 3 } }), headers: sessionHeaders(h) });
    assert.equal(next.status, 200);
    assert.ok('result' in (messages(next.events).at(-1) as object));
  });
});

describe('cluster in one process, JSON responses', () => {
  const store = memoryStore();
  const replicas: Fixture[] = [];
  before(async () => {
    for (let i = 0; i < 2; i++) replicas.push(await startFixture({ store, jsonResponse: true, cluster: { enabled: true, leaseMs: 300 } }));
  });
  after(async () => {
    for (const r of replicas) await r.close().catch(() => {});
  });

  it('a POST carried to the owner comes back as the JSON answer', async () => {
    const [a, b] = replicas.map((r) => r.url) as [URL, URL];
    const h = await initialize(a);
    const call = rpc('tools/call', { name: 'emit', arguments: { count: 3 } });
    const r = await send(b, { body: call, headers: sessionHeaders(h) });
    assert.equal(r.status, 200, r.text);
    const body = r.json() as { id: unknown; result?: { structuredContent?: unknown } };
    assert.equal(body.id, call.id);
    assert.deepEqual(body.result?.structuredContent, { emitted: 3 });
  });
});
