import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createEndpoint } from 'mcp-continuity/server';
import { listen } from 'mcp-continuity/node';
import { ContinuityClientTransport } from 'mcp-continuity/client';
import { memoryStore, type EventLog, type LogEvent, type Store } from 'mcp-continuity/store';

/** Any store, with a count of the events appended to it: the store interfaces are public. */
function countingStore(inner: Store): Store & { appended: () => number } {
  let appended = 0;
  const log: EventLog = {
    openStream: (...args) => inner.log.openStream(...args),
    read: (...args) => inner.log.read(...args),
    head: (...args) => inner.log.head(...args),
    closeStream: (...args) => inner.log.closeStream(...args),
    streams: (...args) => inner.log.streams(...args),
    dropStream: (...args) => inner.log.dropStream(...args),
    dropSession: (...args) => inner.log.dropSession(...args),
    async append(...args) {
      await inner.log.append(...args);
      const events: readonly LogEvent[] = args[2];
      appended += events.length;
    },
  };
  return { ...inner, name: `counting(${inner.name})`, log, appended: () => appended };
}

const store = countingStore(memoryStore());
const endpoint = createEndpoint({
  server: () => {
    const server = new McpServer({ name: 'counted', version: '1.0.0' });
    server.registerTool('hello', { description: 'Says hello' }, () => ({ content: [{ type: 'text', text: 'hello' }] }));
    return server;
  },
  store,
});
const listener = await listen(endpoint, { port: 0 });

const transport = new ContinuityClientTransport(listener.url);
const client = new Client({ name: 'counter', version: '1.0.0' });
await client.connect(transport);
await client.callTool({ name: 'hello' });
console.log(`events logged before they were sent: ${store.appended()}`);

await transport.terminateSession();
await client.close();
await listener.close();
await store.close();
