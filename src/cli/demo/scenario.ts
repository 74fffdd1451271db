/**
 * The demo's scenarios: one long tool call per client per fault, through the chaos proxy,
 * with what each client saw recorded (events, lost, duplicated, reordered, outcome).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ContinuityClientTransport, type DivergenceReport } from '../../client/index.js';
import { ContinuityError } from '../../protocol/errors.js';

/** What one client saw during one scenario. */
export interface Observation {
  client: 'mcp-continuity' | 'official SDK';
  /** Events the call should have delivered. */
  events: number;
  /** Sequence numbers in arrival order. */
  seqs: number[];
  received: number;
  lost: number;
  duplicated: number;
  reordered: number;
  outcome: 'completed' | 'failed' | 'hung';
  detail: string;
  divergences: DivergenceReport[];
  ms: number;
}

/** A serve child process on a fixed port and SQLite file, which the demo can kill -9 and restart. */
export class ServerProcess {
  child: ChildProcess | undefined;
  constructor(
    readonly port: number,
    readonly db: string,
  ) {}
  async start(): Promise<URL> {
    // Run the same CLI entry point (dist, or src under tsx) with the same loader flags.
    const child = spawn(
      process.execPath,
      [...process.execArgv, process.argv[1] as string, 'serve', '--port', String(this.port), '--store', `sqlite:${this.db}`, '--quiet'],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    this.child = child;
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout as NodeJS.ReadableStream }).once('line', resolve);
      child.once('exit', (code) => reject(new ContinuityError('internal-error', `the demo server exited with ${code}`)));
    });
    return new URL(line.trim());
  }
  async kill9(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await gone;
  }
}

function makeTransport(kind: Observation['client'], url: URL, divergences: DivergenceReport[]): Transport {
  if (kind === 'mcp-continuity')
    return new ContinuityClientTransport(url, { reconnect: { initialDelayMs: 20, maxDelayMs: 200 }, onDivergence: (r) => divergences.push(r) });
  return new StreamableHTTPClientTransport(url, {
    reconnectionOptions: { initialReconnectionDelay: 20, maxReconnectionDelay: 200, reconnectionDelayGrowFactor: 1.5, maxRetries: 20 },
  });
}

/**
 * The line a failed call shows: the error's whole first line. It names the divergence and
 * why the client refused to go on, so it is never cut short.
 */
export function failureDetail(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0]?.trim() || 'error';
}

/** Runs one emit call of `events` events; `during` runs once `trigger` events have arrived. */
export async function observe(
  kind: Observation['client'],
  url: URL,
  events: number,
  options: { trigger?: number; during?: () => Promise<void>; hangMs: number; intervalMs?: number },
): Promise<Observation> {
  const divergences: DivergenceReport[] = [];
  const seqs: number[] = [];
  const client = new Client({ name: `demo-${kind}`, version: '1.0.0' });
  let fired: Promise<void> | undefined;
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    const seq = (n.params.data as { seq?: unknown } | undefined)?.seq;
    if (typeof seq !== 'number') return;
    seqs.push(seq);
    if (options.trigger !== undefined && seqs.length === options.trigger && options.during) fired = options.during();
  });
  const started = performance.now();
  let outcome: Observation['outcome'] = 'completed';
  let detail = '';
  try {
    await client.connect(makeTransport(kind, url, divergences));
    let timer: ReturnType<typeof setTimeout> | undefined;
    const hung = new Promise<'hung'>((resolve) => {
      timer = setTimeout(() => resolve('hung'), options.hangMs);
    });
    const call = client.callTool({ name: 'emit', arguments: { count: events, intervalMs: options.intervalMs ?? 10 } }, undefined, {
      timeout: options.hangMs * 2,
    });
    const result = await Promise.race([call, hung]).finally(() => clearTimeout(timer));
    call.catch(() => undefined);
    if (result === 'hung') {
      outcome = 'hung';
      detail = `no answer after ${Math.round(options.hangMs / 1000)} s`;
    } else {
      detail = 'result received';
    }
  } catch (error) {
    outcome = 'failed';
    detail = failureDetail(error);
  } finally {
    await fired?.catch(() => undefined);
    await client.close().catch(() => undefined);
  }
  const counts = new Map<number, number>();
  let reordered = 0;
  let highest = 0;
  for (const s of seqs) {
    counts.set(s, (counts.get(s) ?? 0) + 1);
    if (s < highest) reordered++;
    highest = Math.max(highest, s);
  }
  const duplicated = [...counts.values()].reduce((sum, c) => sum + c - 1, 0);
  const top = outcome === 'completed' ? events : highest;
  let lost = 0;
  for (let s = 1; s <= top; s++) if (!counts.has(s)) lost++;
  return {
    client: kind,
    events,
    seqs,
    received: seqs.length,
    lost,
    duplicated,
    reordered,
    outcome,
    detail,
    divergences,
    ms: Math.round(performance.now() - started),
  };
}
