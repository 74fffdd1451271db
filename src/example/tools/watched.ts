import { WATCHED_RESOURCE_URI } from '../resources.js';
import type { ExampleTool } from './table.js';

/** The revision of the watched resource: per session on the 2025-era leg, per handler on the stateless one. */
export interface WatchedResource {
  revision: number;
}

/**
 * `update_watched_resource`: bumps the watched resource's revision and announces it: to
 * this session if it subscribed (2025-era leg), or to every `subscriptions/listen` stream
 * that asked for the URI (stateless leg).
 */
export function updateWatchedTool(watched: WatchedResource): ExampleTool {
  return {
    name: 'update_watched_resource',
    description: `Bumps the revision of ${WATCHED_RESOURCE_URI}; notifies the client if it subscribed.`,
    async run(_args, ctx) {
      watched.revision++;
      const notified = await ctx.resourceUpdated(WATCHED_RESOURCE_URI);
      const who = ctx.era === '2026' ? ', listeners notified' : notified ? ', subscriber notified' : ', no subscriber';
      return { content: [{ type: 'text', text: `revision ${watched.revision}${who}` }] };
    },
  };
}
