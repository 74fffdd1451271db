/**
 * A rebuilt session is the same session: the log level and resource subscriptions a client
 * set survive a restart (SQLite) and passivation (memory in a cluster, SQLite), seen by the
 * same SDK `Client`, on our transport and on the official one (which, for passivation, is
 * kept from opening its standalone GET stream: a session with a reader stays in memory).
 * (The takeover after kill -9 on Redis is in test/cluster/lasting-takeover.test.ts.)
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ContinuityClientTransport } from '../../src/client/index.js';
import { WATCHED_RESOURCE_URI } from '../../src/example/index.js';
import { memoryStore } from '../../src/store/memory/index.js';
import { sqliteStore } from '../../src/store/sqlite/index.js';
import type { Store } from '../../src/store/types.js';
import { startFixture, type Fixture } from '../helpers/fixture.js';
import { STANDALONE_STREAM } from '../../src/server/stream/names.js';
import { startRoundRobin } from '../helpers/round-robin.js';
import { tempFiles } from '../helpers/temp-files.js';
import { waitFor } from '../helpers/wait.js';
import { lastingProbe } from './lasting-probe.js';

type Kind = 'ours' | 'sdk';

/**
 * The official transport always opens the standalone GET stream, and a session with a reader
 * is never passivated. Without `standalone` its GET (one that resumes nothing) is answered
 * 405 before it leaves, as the spec lets a server answer: a client that holds no GET stream.
 */
function withoutStandalone(): (url: string | URL, init?: RequestInit) => Promise<Response> {
  return (url, init) => {
    const resumes = new Headers(init?.headers).has('last-event-id');
    if (init?.method === 'GET' && !resumes) return Promise.resolve(new Response(null, { status: 405 }));
    return fetch(url, init);
  };
}

function transportFor(kind: Kind, url: URL, standalone: boolean): Transport {
  if (kind === 'sdk') {
    return new StreamableHTTPClientTransport(url, {
      reconnectionOptions: { initialReconnectionDelay: 20, maxReconnectionDelay: 200, reconnectionDelayGrowFactor: 1.5, maxRetries: 50 },
      ...(standalone ? {} : { fetch: withoutStandalone() }),
    });
  }
  return new ContinuityClientTransport(url, { reconnect: { initialDelayMs: 20, maxDelayMs: 200 }, standaloneStream: standalone });
}

const files = tempFiles('mcpc-lasting-');

for (const kind of ['ours', 'sdk'] as const) {
  describe(`lasting session state (${kind} client transport)`, () => {
    it('survives a restart on SQLite: no info log after setLevel(error), and the subscribed update arrives', async (t) => {
      const path = join(files.dir, `restart-${kind}.sqlite`);
      let store: Store = sqliteStore({ path });
      let f: Fixture = await startFixture({ store, keepAliveMs: 0, retryMs: 10 });
      // The address clients know stays up (a load balancer's); the process behind it restarts.
      const front = await startRoundRobin([f.url]);
      const client = new Client({ name: 'lasting', version: '1.0.0' });
      const probe = lastingProbe(client);
      await client.connect(transportFor(kind, front.url, true));
      t.after(async () => {
        await client.close().catch(() => {});
        await front.close();
        await f.close();
        await store.close();
      });
      const session = (client.transport as { sessionId?: string }).sessionId;
      await probe.set();
      await probe.holds('before the restart');

      await f.close();
      await store.close();
      store = sqliteStore({ path });
      f = await startFixture({ store, keepAliveMs: 0, retryMs: 10 });
      front.setUpstreams([f.url]);
      assert.equal(f.endpoint.sessionCount, 0, 'a new process holds nothing yet');

      await probe.holds('after the restart');
      assert.equal((client.transport as { sessionId?: string }).sessionId, session, 'the same session');
      assert.deepEqual(f.errors, []);
    });

    for (const storeKind of ['memory', 'sqlite'] as const) {
      it(`survives passivation (${storeKind}, no GET stream held)`, async (t) => {
        const store = storeKind === 'memory' ? memoryStore() : sqliteStore({ path: files.path(`passivate-${kind}`) });
        // Memory passivates only in a cluster (several endpoints sharing the store).
        const f = await startFixture({
          store,
          keepAliveMs: 0,
          limits: { passivateAfterMs: 100 },
          ...(storeKind === 'memory' ? { cluster: { enabled: true } } : {}),
        });
        t.after(async () => {
          await f.close();
          await store.close();
        });
        const client = new Client({ name: 'lasting', version: '1.0.0' });
        const probe = lastingProbe(client);
        await client.connect(transportFor(kind, f.url, false));
        t.after(() => client.close().catch(() => {}));
        const transport = client.transport as { sessionId?: string; protocolVersion?: string };
        const session = transport.sessionId as string;
        await probe.set();
        await waitFor(() => f.endpoint.sessionCount === 0, 'the idle session to be passivated');

        await probe.holds('after passivation', { standalone: false });
        assert.equal(transport.sessionId, session, 'the same session');
        // The update went to the session's standalone stream, which no one was reading: it is in its log.
        const logged = await store.log.read(session, STANDALONE_STREAM, 0, 1000);
        assert.ok(
          logged.some((e) => e.payload.includes('"notifications/resources/updated"') && e.payload.includes(WATCHED_RESOURCE_URI)),
          'the update is logged',
        );
        assert.deepEqual(f.errors, []);
      });
    }
  });
}
