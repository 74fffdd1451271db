/**
 * The semantic-continuity probe of a session: the client sets its log level to `error` and
 * subscribes to the example's watched resource; `holds` then checks that an `emit` call's
 * info logs are filtered out and that an update of the watched resource is announced.
 */
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LoggingMessageNotificationSchema, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { WATCHED_RESOURCE_URI } from '../../src/example/index.js';
import { waitFor } from '../helpers/wait.js';

export interface LastingProbe {
  /** setLevel('error') and a subscription to the watched resource. */
  set(): Promise<void>;
  /** The state holds: no info log on a call, and the subscribed update (on the standalone stream unless told otherwise). */
  holds(when: string, options?: { standalone?: boolean }): Promise<void>;
  readonly logs: number;
  readonly updates: number;
}

export function lastingProbe(client: Client): LastingProbe {
  let logs = 0;
  let updates = 0;
  client.setNotificationHandler(LoggingMessageNotificationSchema, () => {
    logs++;
  });
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    if (n.params.uri === WATCHED_RESOURCE_URI) updates++;
  });
  return {
    get logs() {
      return logs;
    },
    get updates() {
      return updates;
    },
    async set() {
      await client.setLoggingLevel('error');
      await client.subscribeResource({ uri: WATCHED_RESOURCE_URI });
    },
    async holds(when, options = {}) {
      const before = logs;
      const emitted = await client.callTool({ name: 'emit', arguments: { count: 3 } });
      assert.deepEqual(emitted.structuredContent, { emitted: 3 }, `${when}: the call ran`);
      // The call's logs travel on its own stream, ahead of its result.
      assert.equal(logs - before, 0, `${when}: info logs arrived after setLevel('error')`);
      const updatesBefore = updates;
      const bumped = await client.callTool({ name: 'update_watched_resource', arguments: {} });
      const text = (bumped.content as Array<{ text?: string }>)[0]?.text ?? '';
      assert.match(text, /subscriber notified/, `${when}: the server forgot the subscription (${text})`);
      if (options.standalone !== false) await waitFor(() => updates > updatesBefore, `${when}: the resource update`);
    },
  };
}
