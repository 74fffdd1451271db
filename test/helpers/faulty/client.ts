/**
 * The official SDK v1 `Client` on our `ContinuityClientTransport`, instrumented for the
 * fault tests: every `notifications/message` the SDK hands to the application, every
 * divergence report, every transport error, and helpers to wait for them.
 */
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LoggingMessageNotificationSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { ContinuityClientTransport, type ContinuityClientOptions, type DivergenceReport } from '../../../src/client/index.js';
import type { EventData } from './server.js';
import { waitFor } from '../wait.js';

export interface Harness {
  client: Client;
  transport: ContinuityClientTransport;
  /** `data` of every logging notification delivered to the SDK client, in order. */
  delivered: EventData[];
  reports: DivergenceReport[];
  errors: Error[];
  /** Resolves with the next divergence report (one already received and not yet taken counts). */
  nextDivergence(timeoutMs?: number): Promise<DivergenceReport>;
  /** Resolves once `count` notifications have been delivered in total. */
  deliveredAtLeast(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** Fast reconnects for tests. */
export const FAST_RECONNECT = { initialDelayMs: 10, maxDelayMs: 50 } as const;

export async function connectHarness(url: URL, options: ContinuityClientOptions = {}): Promise<Harness> {
  const delivered: EventData[] = [];
  const reports: DivergenceReport[] = [];
  const errors: Error[] = [];
  let taken = 0;
  const errorList = (): string => errors.map((e) => e.message).join(' | ');
  const transport = new ContinuityClientTransport(url, {
    reconnect: FAST_RECONNECT,
    ...options,
    onDivergence: (report) => {
      reports.push(report);
      options.onDivergence?.(report);
    },
  });
  const client = new Client({ name: 'faulty-servers-test', version: '1.0.0' }, { capabilities: {} });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    delivered.push(n.params.data as EventData);
  });
  client.onerror = (error) => {
    errors.push(error);
  };

  await client.connect(transport);
  return {
    client,
    transport,
    delivered,
    reports,
    errors,
    nextDivergence: (timeoutMs) =>
      waitFor(
        () => (reports.length > taken ? reports[taken++] : undefined),
        () => `a divergence report; errors: ${errorList()}`,
        timeoutMs,
      ),
    deliveredAtLeast: (count, timeoutMs) =>
      waitFor(
        () => delivered.length >= count,
        () => `${count} delivered notifications; errors: ${errorList()}`,
        timeoutMs,
      ).then(() => {}),
    async close() {
      await client.close();
    },
  };
}

/** Settles a promise into its value or its error, so a rejection is never unhandled while the test waits. */
export function settle<T>(promise: Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
  return promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
}

/** Asserts `outcome` is a rejection with an McpError whose `data.reason` is `reason`; returns its data. */
export function assertRejectedWith(outcome: { ok: true; value: unknown } | { ok: false; error: unknown }, reason: string): Record<string, unknown> {
  assert.ok(!outcome.ok, `the in-flight call must fail with reason ${reason}, but it succeeded: ${outcome.ok ? JSON.stringify(outcome.value) : ''}`);
  const error = outcome.error;
  assert.ok(error instanceof McpError, `the in-flight call must reject with an McpError, got ${String(error)}`);
  const data = (error.data ?? {}) as Record<string, unknown>;
  assert.equal(data.reason, reason, `error.data.reason of the failed call (${error.message})`);
  return data;
}

/** Asserts no delivered event repeats (by origin and seq) and none is junk. */
export function assertDeliveredOnce(delivered: readonly EventData[], origins: readonly string[]): void {
  const keys = delivered.map((d) => `${d.origin}:${d.seq}`);
  assert.equal(new Set(keys).size, keys.length, `an event was delivered twice: ${keys.join(',')}`);
  const junk = delivered.filter((d) => d.junk === true || !origins.includes(d.origin));
  assert.deepEqual(junk, [], 'no junk (post-restart / other replica) event may reach the application');
}

/** The text of a tool result's first content item. */
export function firstText(result: unknown): string {
  const content = (result as { content?: Array<{ text?: string }> }).content;
  return content?.[0]?.text ?? '';
}
