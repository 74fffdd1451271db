/**
 * Client verification overhead: the CPU of the verifier path per event (the check, and the
 * position note the transport makes per event; the position itself is read only when saved;
 * over IDs and payloads made locally with the server's codec) against the client's CPU per event reading a burst
 * from a server process, two ways: our `ContinuityClientTransport` alone (fetch, SSE
 * parsing, verification, JSON parsing, delivery), and the SDK `Client` on it (as a user
 * runs it: the SDK also validates each message).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { ContinuityClientTransport } from '../src/client/index.js';
import { createStreamVerifier } from '../src/client/verifier.js';
import { StreamPositions } from '../src/client/positions.js';
import { memoryCheckpoint } from '../src/client/checkpoint.js';
import { chainSeed, eventIdPrefix, nextChain } from '../src/protocol/event-id.js';
import type { JsonRpcMessage } from '../src/protocol/jsonrpc.js';
import { startServer } from './proc.js';
import { spread } from './stats.js';
import { notificationParams, padFor } from './workload.js';

export interface VerifyResult {
  events: number;
  payload: number;
  /** Our transport alone. */
  clientUsPerEvent: number;
  /** The SDK `Client` on our transport: the client as a user runs it. */
  sdkClientUsPerEvent: number;
  verifierUsPerEvent: number;
  /** verifier / transport alone. */
  overhead: number;
  /** verifier / SDK `Client` on our transport. */
  sdkOverhead: number;
}

/** CPU µs of this process spent in `fn`. */
async function cpuOf(fn: () => Promise<void> | void): Promise<number> {
  const before = process.cpuUsage();
  await fn();
  const used = process.cpuUsage(before);
  return used.user + used.system;
}

async function clientCost(url: URL, events: number, payload: number): Promise<number> {
  const transport = new ContinuityClientTransport(url);
  let notifications = 0;
  const waiters = new Map<number, (m: JsonRpcMessage) => void>();
  transport.onmessage = (m) => {
    if ('method' in m) notifications++;
    else if ('id' in m && typeof m.id === 'number') waiters.get(m.id)?.(m);
  };
  const call = (id: number, method: string, params: Record<string, unknown>): Promise<JsonRpcMessage> => {
    const answered = new Promise<JsonRpcMessage>((resolve) => waiters.set(id, resolve));
    void transport.send({ jsonrpc: '2.0', id, method, params });
    return answered;
  };
  await transport.start();
  await call(1, 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } });
  await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  // Warm-up, then the measured burst.
  await call(2, 'tools/call', { name: 'burst', arguments: { count: 2_000, size: payload } });
  const passes: number[] = [];
  for (let i = 0; i < 3; i++) {
    notifications = 0;
    passes.push(
      await cpuOf(async () => {
        await call(3 + i, 'tools/call', { name: 'burst', arguments: { count: events, size: payload } });
      }),
    );
    if (notifications !== events) throw new Error(`client read ${notifications} of ${events}`);
  }
  await transport.close();
  return spread(passes).median / events;
}

async function sdkClientCost(url: URL, events: number, payload: number): Promise<number> {
  const client = new Client({ name: 'bench', version: '1' });
  let notifications = 0;
  client.setNotificationHandler(LoggingMessageNotificationSchema, () => {
    notifications++;
  });
  await client.connect(new ContinuityClientTransport(url));
  const burst = (count: number) => client.callTool({ name: 'burst', arguments: { count, size: payload } }, undefined, { timeout: 600_000 });
  await burst(2_000);
  const passes: number[] = [];
  for (let i = 0; i < 3; i++) {
    notifications = 0;
    passes.push(
      await cpuOf(async () => {
        await burst(events);
      }),
    );
    if (notifications !== events) throw new Error(`SDK client read ${notifications} of ${events}`);
  }
  await client.close();
  return spread(passes).median / events;
}

async function verifierCost(events: number, payload: number): Promise<number> {
  const epoch = 'EPOCH000000000000';
  const stream = 'r1';
  const prefix = eventIdPrefix(epoch, stream);
  const pad = padFor(payload);
  const ids: string[] = [];
  const data: string[] = [];
  let chain = chainSeed(epoch, stream);
  for (let i = 1; i <= events; i++) {
    const d = JSON.stringify({ method: 'notifications/message', params: notificationParams(pad), jsonrpc: '2.0' });
    chain = nextChain(chain, d);
    ids.push(`${prefix}${i}.${chain}`);
    data.push(d);
  }
  const run = (): void => {
    const verifier = createStreamVerifier({ epoch, stream });
    const positions = new StreamPositions(
      memoryCheckpoint(),
      () => ({ sessionId: undefined, protocolVersion: undefined, epoch, initialize: undefined, standalone: undefined }),
      () => {},
    );
    for (let i = 0; i < events; i++) {
      const v = verifier.check(ids[i], data[i] as string);
      if (v.kind !== 'continuous') throw new Error(`verifier: ${v.kind}`);
      // What the transport does per verified event (`advanced`): the stream's position is read when saved.
      positions.advanced(verifier);
    }
  };
  run(); // warm-up
  // Several passes, the median: one pass is short enough for a GC or a scheduler hiccup to dominate.
  const passes: number[] = [];
  for (let i = 0; i < 7; i++) passes.push(await cpuOf(run));
  return spread(passes).median / events;
}

export async function verifyOverhead(events: number, payload: number): Promise<VerifyResult> {
  const server = await startServer('memory');
  try {
    const clientUsPerEvent = await clientCost(server.url, events, payload);
    const sdkClientUsPerEvent = await sdkClientCost(server.url, events, payload);
    const verifierUsPerEvent = await verifierCost(events, payload);
    return {
      events,
      payload,
      clientUsPerEvent,
      sdkClientUsPerEvent,
      verifierUsPerEvent,
      overhead: verifierUsPerEvent / clientUsPerEvent,
      sdkOverhead: verifierUsPerEvent / sdkClientUsPerEvent,
    };
  } finally {
    await server.close();
  }
}
