/**
 * One MCP session of each client kind behind one small interface, so the workload is the
 * same for all: ours (the SDK v1 `Client` on ContinuityClientTransport), the SDK v1
 * client on its own transport, and the SDK v2 client (`@modelcontextprotocol/client`).
 */
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { ContinuityClientTransport, type DivergenceReport } from '../../src/client/index.js';
import type { ClientKind } from './history.js';

export interface Connection {
  callTool(name: string, args: Record<string, unknown>, timeoutMs: number): Promise<unknown>;
  setLoggingLevel(level: 'warning' | 'info', timeoutMs: number): Promise<unknown>;
  subscribe(uri: string, timeoutMs: number): Promise<unknown>;
  close(): Promise<void>;
}

export interface Handlers {
  /** A `notifications/message` (level, logger, data). */
  log(logger: string | undefined, data: unknown): void;
  /** A `notifications/resources/updated`. */
  updated(): void;
  /** Ours only: the transport re-initialized after a divergence or a lost session. */
  divergence(report: DivergenceReport): void;
}

const SDK_RECONNECT = { initialReconnectionDelay: 50, maxReconnectionDelay: 500, reconnectionDelayGrowFactor: 1.5, maxRetries: 30 };

export async function connect(kind: ClientKind, url: URL, name: string, on: Handlers, timeoutMs: number): Promise<Connection> {
  if (kind === 'sdk2') {
    const client = new ClientV2({ name, version: '1.0.0' });
    client.setNotificationHandler('notifications/message', (n) => on.log(n.params.logger, n.params.data));
    client.setNotificationHandler('notifications/resources/updated', () => on.updated());
    await client.connect(new TransportV2(url, { reconnectionOptions: SDK_RECONNECT }), { timeout: timeoutMs });
    return {
      callTool: (tool, args, timeout) => client.callTool({ name: tool, arguments: args }, { timeout }),
      setLoggingLevel: (level, timeout) => client.setLoggingLevel(level, { timeout }),
      subscribe: (uri, timeout) => client.subscribeResource({ uri }, { timeout }),
      close: () => client.close(),
    };
  }
  const client = new Client({ name, version: '1.0.0' });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => on.log(n.params.logger, n.params.data));
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, () => on.updated());
  const transport =
    kind === 'ours'
      ? new ContinuityClientTransport(url, {
          reconnect: { initialDelayMs: 20, maxDelayMs: 300, maxRequestAttempts: 400 },
          onDivergence: (r) => on.divergence(r),
        })
      : new StreamableHTTPClientTransport(url, { reconnectionOptions: SDK_RECONNECT });
  await client.connect(transport, { timeout: timeoutMs });
  return {
    callTool: (tool, args, timeout) => client.callTool({ name: tool, arguments: args }, undefined, { timeout }),
    setLoggingLevel: (level, timeout) => client.setLoggingLevel(level, { timeout }),
    subscribe: (uri, timeout) => client.subscribeResource({ uri }, { timeout }),
    close: () => client.close(),
  };
}
