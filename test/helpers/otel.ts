/**
 * The OpenTelemetry SDK registered globally with in-memory exporters, as an application
 * would register its own: what the package records through `@opentelemetry/api` lands here.
 */
import { metrics, propagation, trace, type Attributes } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  AggregationTemporality,
  DataPointType,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type MetricData,
} from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';

export interface Otel {
  /** Every span ended so far. */
  spans(): ReadableSpan[];
  /** Collects the metrics now. */
  collect(): Promise<Collected>;
  /** Unregisters the SDK (the API goes back to its no-ops). */
  close(): Promise<void>;
}

export interface Collected {
  /** Sum of a counter's points (or a histogram's counts) whose attributes include `where`. */
  count(name: string, where?: Attributes): number;
  /** The metric, if recorded at all. */
  metric(name: string): MetricData | undefined;
}

export function registerOtel(): Otel {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  // Exports only when asked (forceFlush): the interval is longer than any test.
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  const spanExporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spanExporter)] });
  metrics.setGlobalMeterProvider(meterProvider);
  trace.setGlobalTracerProvider(tracerProvider);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  return {
    spans: () => spanExporter.getFinishedSpans(),
    async collect() {
      exporter.reset();
      await reader.forceFlush();
      const all = exporter.getMetrics().flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics));
      const metric = (name: string): MetricData | undefined => all.filter((m) => m.descriptor.name === name).at(-1);
      return {
        metric,
        count(name, where = {}) {
          const m = metric(name);
          if (!m) return 0;
          let total = 0;
          for (const point of m.dataPoints) {
            if (!Object.entries(where).every(([k, v]) => point.attributes[k] === v)) continue;
            if (m.dataPointType === DataPointType.HISTOGRAM) total += (point.value as { count: number }).count;
            else total += point.value as number;
          }
          return total;
        },
      };
    },
    async close() {
      metrics.disable();
      trace.disable();
      propagation.disable();
      await meterProvider.shutdown();
      await tracerProvider.shutdown();
    },
  };
}
