import { ResourceTemplate, type McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, McpError, SubscribeRequestSchema, UnsubscribeRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { PIXEL_PNG_BASE64, PNG_MIME_TYPE } from './media.js';
import type { WatchedResource } from './tools/watched.js';

/** URI of the one resource whose content changes (see `update_watched_resource`). */
export const WATCHED_RESOURCE_URI = 'test://watched-resource';

/** Subscriptions one session may hold: each is kept in memory for the session's life. */
export const MAX_SUBSCRIPTIONS = 100;

/** The spec's code for an unknown resource. */
const RESOURCE_NOT_FOUND = -32002;

const STATIC_URIS = new Set(['test://static-text', 'test://static-binary', WATCHED_RESOURCE_URI]);
const TEMPLATE_URI = /^test:\/\/template\/[^/]{1,256}\/data$/;

/**
 * Registers the example's resources (conformance `resources-*` scenarios):
 * `test://static-text`, `test://static-binary`, the template
 * `test://template/{id}/data`, and `test://watched-resource` (at `watched.revision`, which
 * the tool `update_watched_resource` bumps), plus `resources/subscribe` /
 * `resources/unsubscribe`. Returns the session's subscribed URIs: the tool sends
 * `notifications/resources/updated` when the client subscribed to the watched resource.
 *
 * That notification is about the session, not about the tool call, so it is
 * sent unrelated to any request: a Streamable HTTP transport delivers it on
 * the standalone GET stream, which makes it a handy probe for that stream.
 */
export function registerResources(server: McpServer, watched: WatchedResource): ReadonlySet<string> {
  registerFixedResources(server);
  return registerWatchedResource(server, watched);
}

/** The resources whose content never changes: the two static ones and the template. */
function registerFixedResources(server: McpServer): void {
  server.registerResource(
    'static-text',
    'test://static-text',
    { title: 'Static text', description: 'A fixed plain-text resource.', mimeType: 'text/plain' },
    (uri) => ({
      contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'This is the content of the static text resource.' }],
    }),
  );

  server.registerResource(
    'static-binary',
    'test://static-binary',
    { title: 'Static binary', description: 'A fixed binary resource (a 1×1 PNG).', mimeType: PNG_MIME_TYPE },
    (uri) => ({ contents: [{ uri: uri.href, mimeType: PNG_MIME_TYPE, blob: PIXEL_PNG_BASE64 }] }),
  );

  server.registerResource(
    'template-data',
    // No `list` callback: the id space is open-ended, so resources/list omits it.
    new ResourceTemplate('test://template/{id}/data', { list: undefined }),
    {
      title: 'Templated data',
      description: 'JSON data for any {id}, echoing the id back.',
      mimeType: 'application/json',
    },
    (uri, variables) => {
      const raw = variables['id'];
      const id = Array.isArray(raw) ? raw.join(',') : (raw ?? '');
      return {
        contents: [
          {
            uri: uri.href,
            mimeType: 'application/json',
            text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }),
          },
        ],
      };
    },
  );
}

/** The watched resource and the subscriptions to it. */
function registerWatchedResource(server: McpServer, watched: WatchedResource): ReadonlySet<string> {
  server.registerResource(
    'watched-resource',
    WATCHED_RESOURCE_URI,
    {
      title: 'Watched resource',
      description: 'A resource that changes when update_watched_resource is called; subscribe to hear about it.',
      mimeType: 'text/plain',
    },
    (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: `Watched resource, revision ${watched.revision}.` }] }),
  );
  return registerSubscriptions(server);
}

/**
 * Handles `resources/subscribe` and `resources/unsubscribe`; returns the set of subscribed URIs.
 *
 * One McpServer serves one session, so a plain set is the session's subscriptions. Only
 * resources that exist, and boundedly many: each subscription is held until the session
 * ends, and a client could otherwise grow the set (up to a request body a URI) without end.
 */
function registerSubscriptions(server: McpServer): Set<string> {
  const subscriptions = new Set<string>();
  server.server.registerCapabilities({ resources: { subscribe: true } });
  server.server.setRequestHandler(SubscribeRequestSchema, (request) => {
    const { uri } = request.params;
    if (!STATIC_URIS.has(uri) && !TEMPLATE_URI.test(uri)) throw new McpError(RESOURCE_NOT_FOUND, 'Resource not found', { uri: uri.slice(0, 256) });
    if (!subscriptions.has(uri) && subscriptions.size >= MAX_SUBSCRIPTIONS) {
      throw new McpError(ErrorCode.InvalidParams, `At most ${MAX_SUBSCRIPTIONS} resource subscriptions per session`, { limit: MAX_SUBSCRIPTIONS });
    }
    subscriptions.add(uri);
    return {};
  });
  server.server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
    subscriptions.delete(request.params.uri);
    return {};
  });
  return subscriptions;
}
