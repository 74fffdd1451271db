/** The SDK `Client` on our transport, recording what `produce` delivers to the application. */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { ContinuityClientTransport, type ContinuityClientOptions, type DivergenceReport } from '../../../src/client/index.js';

export interface Consumer {
  client: Client;
  transport: ContinuityClientTransport;
  /** Delivered seqs of the current run, in order. */
  delivered: number[];
  /** Deliveries of another run than the current one (always unexpected). */
  strays: number;
  reports: DivergenceReport[];
  errors: Error[];
  /** Starts recording run `run`. */
  begin(run: string): void;
  /** Calls `produce`; resolves with `delivered` or the error code of the failure. */
  produce(run: string, count: number, extra?: { pad?: number; intervalMs?: number }): Promise<{ ok: boolean; code: string }>;
  close(): Promise<void>;
}

export async function connectConsumer(url: URL, options: ContinuityClientOptions = {}): Promise<Consumer> {
  let current = '';
  const c: Consumer = {
    client: new Client({ name: 'faults', version: '0' }),
    transport: new ContinuityClientTransport(url, {
      reconnect: { initialDelayMs: 5, maxDelayMs: 100, maxRequestAttempts: 200 },
      ...options,
      onDivergence: (r) => c.reports.push(r),
    }),
    delivered: [],
    strays: 0,
    reports: [],
    errors: [],
    begin(run) {
      current = run;
      c.delivered = [];
    },
    async produce(run, count, extra = {}) {
      c.begin(run);
      try {
        await c.client.callTool({ name: 'produce', arguments: { run, count, ...extra } }, undefined, { timeout: 30_000 });
        return { ok: true, code: 'delivered' };
      } catch (error) {
        const reason = (error as { data?: { reason?: unknown } }).data?.reason;
        return { ok: false, code: typeof reason === 'string' ? reason : String((error as Error).message).slice(0, 60) };
      }
    },
    close: () => c.client.close(),
  };
  c.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    const data = n.params.data as { run?: string; seq?: number } | undefined;
    if (n.params.logger !== 'produce' || data === undefined) return;
    if (data.run === current && typeof data.seq === 'number') c.delivered.push(data.seq);
    else c.strays++;
  });
  c.client.onerror = (e) => c.errors.push(e);
  await c.client.connect(c.transport);
  return c;
}
