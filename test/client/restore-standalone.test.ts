/**
 * A client process can die after its standalone stream was sent events and before its
 * checkpoint saved a position on that stream. The process restored from that checkpoint
 * resumes the standalone stream from its start (`<epoch>.0.0.<seed>`), so what the dead
 * process was sent there is replayed to it, in the same session, with nothing reported.
 * Opening the stream afresh instead skipped those events: the verifier saw a gap and the
 * transport re-initialized (one run in three of the checkpoint-restore test).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { ContinuityClientTransport, memoryCheckpoint, type DivergenceReport } from '../../src/client/index.js';
import { WATCHED_RESOURCE_URI } from '../../src/example/index.js';
import { startFixture } from '../helpers/fixture.js';
import { rpc, send } from '../helpers/sse-client.js';
import { waitFor, within } from '../helpers/wait.js';

test('restored without a standalone position: the standalone stream resumes from its start, and its events are delivered', async () => {
  const f = await startFixture({ keepAliveMs: 0 });
  try {
    // The first process: subscribes, and its standalone stream is primed (its position saved).
    const first = memoryCheckpoint();
    const a = new Client({ name: 'first', version: '1.0.0' });
    await a.connect(new ContinuityClientTransport(f.url, { checkpoint: first, checkpointIntervalMs: 1 }));
    await a.subscribeResource({ uri: WATCHED_RESOURCE_URI });
    const saved = await waitFor(async () => {
      const c = await first.load();
      return c?.standalone !== undefined ? c : undefined;
    }, 'the first process to save a standalone position');
    await a.close(); // the process goes away; the session stays on the server
    // While no process runs, the server sends on the standalone stream (its log keeps it).
    const headers = { 'mcp-session-id': saved.sessionId ?? '', 'mcp-protocol-version': saved.protocolVersion ?? '' };
    const bumped = await send(f.url, { body: rpc('tools/call', { name: 'update_watched_resource', arguments: {} }), headers });
    assert.equal(bumped.status, 200, bumped.text);

    // The checkpoint as a process that died before saving its standalone position left it.
    const { standalone, ...rest } = saved;
    assert.ok(standalone !== undefined);
    const streams = { ...rest.streams };
    delete streams[standalone];
    const second = memoryCheckpoint();
    await second.save({ ...rest, streams });

    const divergences: DivergenceReport[] = [];
    const errors: Error[] = [];
    const transport = new ContinuityClientTransport(f.url, { checkpoint: second, onDivergence: (r) => divergences.push(r) });
    transport.onerror = (e) => errors.push(e);
    const b = new Client({ name: 'second', version: '1.0.0' });
    const updated = new Promise<string>((resolve) => b.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => resolve(n.params.uri)));
    await b.connect(transport);
    try {
      assert.equal(await within(updated, 'the update sent while no process ran'), WATCHED_RESOURCE_URI);
      assert.equal(transport.sessionId, saved.sessionId, 'the same session');
      const echoed = await b.callTool({ name: 'test_simple_text', arguments: {} });
      assert.ok(Array.isArray(echoed.content));
      assert.deepEqual(divergences, [], 'nothing diverged');
      assert.deepEqual(errors, []);
      assert.equal(f.endpoint.sessionCount, 1);
    } finally {
      await b.close();
    }
  } finally {
    await f.close();
  }
});
