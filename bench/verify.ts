/**
 * Client verification overhead: the CPU our client transport spends per event (a real
 * `ContinuityClientTransport` reading a burst from a server process: fetch, SSE parsing,
 * verification, JSON parsing, delivery; no SDK `Client` on top, so the denominator is the
 * transport alone), against the CPU of the verifier path alone per event (check, its
 * checkpoint, and the position record the transport makes per event) over the same IDs and
 * payloads, computed locally with the server's codec.
 */
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
  clientUsPerEvent: number;
  verifierUsPerEvent: number;
  /** verifier / client. */
  overhead: number;
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
    void transport.send({ jsonrpc: '2.0', id, method, params } as JsonRpcMessage);
    return answered;
  };
  await transport.start();
  await call(1, 'initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } });
  await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' } as JsonRpcMessage);
  // Warm-up, then the measured burst.
  await call(2, 'tools/call', { name: 'burst', arguments: { count: 2_000, size: payload } });
  const passes: number[] = [];
  for (let i = 0; i < 3; i++) {
    notifications = 0;
    passes.push(await cpuOf(async () => {
      await call(3 + i, 'tools/call', { name: 'burst', arguments: { count: events, size: payload } });
    }));
    if (notifications !== events) throw new Error(`client read ${notifications} of ${events}`);
  }
  await transport.close();
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
    const positions = new StreamPositions(memoryCheckpoint(), () => ({ sessionId: undefined, protocolVersion: undefined, epoch, initialize: undefined, standalone: undefined }), () => {});
    const key = {};
    for (let i = 0; i < events; i++) {
      const v = verifier.check(ids[i], data[i] as string);
      if (v.kind !== 'continuous') throw new Error(`verifier: ${v.kind}`);
      const position = verifier.checkpoint();
      if (position) positions.record(key, position);
    }
  };
  run(); // warm-up
  // Several passes, the median: one pass is short enough for a GC or a scheduler hiccup to dominate.
  const passes: number[] = [];
  for (let i = 0; i < 7; i++) passes.push(await cpuOf(run));
  return (spread(passes).median) / events;
}

export async function verifyOverhead(events: number, payload: number): Promise<VerifyResult> {
  const server = await startServer('memory');
  try {
    const clientUsPerEvent = await clientCost(server.url, events, payload);
    const verifierUsPerEvent = await verifierCost(events, payload);
    return { events, payload, clientUsPerEvent, verifierUsPerEvent, overhead: verifierUsPerEvent / clientUsPerEvent };
  } finally {
    await server.close();
  }
}
