/**
 * The instruments every part of the package records on, through `@opentelemetry/api` only:
 * without an SDK registered by the application they are the API's no-ops. The metrics API
 * has no proxy provider (unlike tracing), so instruments made before the application
 * registers its SDK would stay no-ops forever: they are made again whenever the global
 * provider changes, checked on each record (one global lookup).
 */
import { metrics, type Counter, type Histogram, type Meter, type MeterProvider, type ObservableGauge } from '@opentelemetry/api';

/** The instrumentation scope name. */
export const SCOPE = 'mcp-continuity';

/** Bucket bounds of the MCP semantic conventions' duration histograms, seconds. */
const DURATION_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];

/** Metric names: the MCP semantic conventions' own, and this package's continuity metrics. */
export const METRIC = {
  serverOperationDuration: 'mcp.server.operation.duration',
  serverSessionDuration: 'mcp.server.session.duration',
  clientOperationDuration: 'mcp.client.operation.duration',
  clientSessionDuration: 'mcp.client.session.duration',
  resumes: 'mcp_continuity.server.resumes',
  replayedEvents: 'mcp_continuity.server.replayed.events',
  replayedBytes: 'mcp_continuity.server.replayed.bytes',
  refusals: 'mcp_continuity.server.refusals',
  takeovers: 'mcp_continuity.server.takeovers',
  passivations: 'mcp_continuity.server.passivations',
  rebuilds: 'mcp_continuity.server.rebuilds',
  fencedWrites: 'mcp_continuity.server.fenced_writes',
  readerCuts: 'mcp_continuity.server.reader_cuts',
  bufferedBytes: 'mcp_continuity.server.buffered.bytes',
  drains: 'mcp_continuity.server.drains',
  cutNames: 'mcp_continuity.cut_names',
  reconnects: 'mcp_continuity.client.reconnects',
  divergences: 'mcp_continuity.client.divergences',
} as const;

/** Every instrument, made on one meter. */
export interface Instruments {
  readonly serverOperationDuration: Histogram;
  readonly serverSessionDuration: Histogram;
  readonly clientOperationDuration: Histogram;
  readonly clientSessionDuration: Histogram;
  readonly resumes: Counter;
  readonly replayedEvents: Counter;
  readonly replayedBytes: Counter;
  readonly refusals: Counter;
  readonly takeovers: Counter;
  readonly passivations: Counter;
  readonly rebuilds: Counter;
  readonly fencedWrites: Counter;
  readonly readerCuts: Counter;
  readonly drains: Counter;
  readonly cutNames: Counter;
  readonly reconnects: Counter;
  readonly divergences: Counter;
  readonly bufferedBytes: ObservableGauge;
}

/** Where gauges read from; set by the layers that own the numbers. */
const gauges: { bufferedBytes: () => number } = { bufferedBytes: () => 0 };

/** Lets the stream layer tell the gauge of bytes queued for readers where to read. */
export function observeBufferedBytes(read: () => number): void {
  gauges.bufferedBytes = read;
}

let madeFor: MeterProvider | undefined;
let made: Instruments | undefined;

/** The instruments on the global meter provider as it is now. */
export function instruments(): Instruments {
  const provider = metrics.getMeterProvider();
  if (made === undefined || provider !== madeFor) {
    made = make(provider.getMeter(SCOPE));
    madeFor = provider;
  }
  return made;
}

function make(meter: Meter): Instruments {
  const duration = (name: string, description: string): Histogram =>
    meter.createHistogram(name, { unit: 's', description, advice: { explicitBucketBoundaries: DURATION_BUCKETS } });
  const counter = (name: string, description: string, unit = '{event}'): Counter => meter.createCounter(name, { unit, description });
  const bufferedBytes = meter.createObservableGauge(METRIC.bufferedBytes, { unit: 'By', description: 'Bytes queued for all SSE readers of the process' });
  bufferedBytes.addCallback((result) => result.observe(gauges.bufferedBytes()));
  return {
    serverOperationDuration: duration(METRIC.serverOperationDuration, 'MCP request or notification duration as observed on the receiver'),
    serverSessionDuration: duration(METRIC.serverSessionDuration, 'The duration of the MCP session as observed on the MCP server'),
    clientOperationDuration: duration(METRIC.clientOperationDuration, 'The duration of the MCP request or notification as observed on the sender'),
    clientSessionDuration: duration(METRIC.clientSessionDuration, 'The duration of the MCP session as observed on the MCP client'),
    resumes: counter(METRIC.resumes, 'Resumes (GET with Last-Event-ID), by outcome: resumed or the refusal code', '{resume}'),
    replayedEvents: counter(METRIC.replayedEvents, 'Events replayed from the log to resuming readers'),
    replayedBytes: counter(METRIC.replayedBytes, 'Payload bytes replayed from the log to resuming readers', 'By'),
    refusals: counter(METRIC.refusals, 'Requests refused, by error code', '{refusal}'),
    takeovers: counter(METRIC.takeovers, 'Sessions this replica took over from another replica', '{session}'),
    passivations: counter(METRIC.passivations, 'Idle sessions dropped from memory (kept in the store)', '{session}'),
    rebuilds: counter(METRIC.rebuilds, 'Sessions rebuilt from the store (restart, passivation, takeover)', '{session}'),
    fencedWrites: counter(METRIC.fencedWrites, 'Writes the store refused because another replica took the session over', '{write}'),
    readerCuts: counter(METRIC.readerCuts, 'SSE readers cut off (behind, stalled, or past the process-wide bound)', '{reader}'),
    drains: counter(METRIC.drains, 'Endpoint drains, by outcome', '{drain}'),
    cutNames: counter(METRIC.cutNames, 'Names (of methods, tools, prompts) cut to 128 characters before they became an attribute, by attribute', '{name}'),
    reconnects: counter(METRIC.reconnects, 'Client reconnections of a stream, by outcome', '{reconnect}'),
    divergences: counter(METRIC.divergences, 'Divergences or session losses the client detected, by code', '{divergence}'),
    bufferedBytes,
  };
}
