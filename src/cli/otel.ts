/**
 * `serve`'s OpenTelemetry SDK: the resource every scrape and span names (from the standard
 * `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES`, through the SDK's own environment
 * detector), and span export over OTLP/HTTP when `OTEL_EXPORTER_OTLP_ENDPOINT` (or its
 * traces-only form) is set. The SDK packages load only when one of them is used.
 */
import { propagation, trace } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import { StartupError } from './usage.js';

/** The service name when `OTEL_SERVICE_NAME` names none (the SDK's own default, `unknown_service:node`, names nothing). */
const SERVICE_NAME = 'mcp-continuity';

/** How long the last spans get to leave at exit, ms: a collector that does not answer must not hold the process. */
const FLUSH_MS = 1000;

/** The process's resource: the SDK's defaults, our service name, then whatever the `OTEL_*` variables say. */
export async function serveResource(): Promise<Resource> {
  const { defaultResource, detectResources, envDetector, resourceFromAttributes } = await import('@opentelemetry/resources');
  return defaultResource()
    .merge(resourceFromAttributes({ 'service.name': SERVICE_NAME }))
    .merge(detectResources({ detectors: [envDetector] }));
}

/** Is span export asked for by the environment? `OTEL_TRACES_EXPORTER=none` turns it off, as in every SDK. */
export function tracesRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  const endpoint = env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'] ?? env['OTEL_EXPORTER_OTLP_ENDPOINT'];
  return endpoint !== undefined && endpoint !== '' && env['OTEL_TRACES_EXPORTER'] !== 'none';
}

/** Span export as it runs: `flush()` sends what is queued, within a bound. */
export interface Tracing {
  readonly endpoint: string;
  shutdown(): Promise<void>;
}

/**
 * Registers a tracer provider exporting over OTLP/HTTP with JSON bodies. The exporter reads
 * `OTEL_EXPORTER_OTLP_*` itself (endpoint, headers, timeout); batching follows `OTEL_BSP_*`.
 * gRPC is refused at start: this exporter cannot speak it, and a silent fallback would send
 * spans nowhere. `http/protobuf` (the specification's default) is accepted: collectors take
 * JSON on the same port and path.
 */
export async function startTracing(resource: Resource, env: NodeJS.ProcessEnv = process.env): Promise<Tracing> {
  const protocol = env['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'] ?? env['OTEL_EXPORTER_OTLP_PROTOCOL'];
  if (protocol === 'grpc')
    throw new StartupError(
      'OTEL_EXPORTER_OTLP_PROTOCOL=grpc: serve exports spans over OTLP/HTTP only; set it to http/json and point the endpoint at the HTTP port (4318)',
    );
  const [{ BasicTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator }] =
    await Promise.all([import('@opentelemetry/sdk-trace-base'), import('@opentelemetry/exporter-trace-otlp-http'), import('@opentelemetry/core')]);
  const provider = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())] });
  trace.setGlobalTracerProvider(provider);
  // The client's span (traceparent in params._meta) becomes the server span's parent, as with any SDK's defaults.
  propagation.setGlobalPropagator(new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }));
  return {
    endpoint: env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'] ?? `${String(env['OTEL_EXPORTER_OTLP_ENDPOINT']).replace(/\/$/, '')}/v1/traces`,
    async shutdown() {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([provider.shutdown().catch(() => {}), new Promise((resolve) => (timer = setTimeout(resolve, FLUSH_MS)))]);
      clearTimeout(timer);
    },
  };
}
