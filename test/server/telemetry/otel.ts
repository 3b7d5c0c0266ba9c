// The real OpenTelemetry SDK for the telemetry tests: a tracer over an in-memory exporter, a meter
// read on demand, and the AsyncLocalStorage context manager (what a Node backend registers), so
// that startActiveSpan parents what runs inside it.
import { context, trace, type Span } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { MeterProvider, type DataPoint, type Histogram } from '@opentelemetry/sdk-metrics';
import { TestMetricReader } from '../../helpers/metric-reader.js';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { expect } from 'vitest';

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());

export interface Point {
  name: string;
  unit: string;
  attributes: Record<string, unknown>;
  /** A counter's sum, or a histogram's count. */
  value: number;
  /** A histogram's sum. */
  sum?: number;
}

/** A fresh tracer and meter over the real SDK, and what they recorded. */
export function otel() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const reader = new TestMetricReader();
  const meters = new MeterProvider({ readers: [reader] });
  const tracer = provider.getTracer('channel-sdk');
  const meter = meters.getMeter('channel-sdk');
  return {
    tracer,
    meter,
    telemetry: { tracer, meter },
    spans: (): ReadableSpan[] => exporter.getFinishedSpans(),
    reset: () => exporter.reset(),
    named: (name: string): ReadableSpan[] => exporter.getFinishedSpans().filter((s) => s.name === name),
    /** Runs `fn` inside an active span of the caller's own, as a framework's instrumentation would. */
    within: <T>(fn: (span: Span) => Promise<T>): Promise<T> =>
      tracer.startActiveSpan('caller', async (span) => {
        try {
          return await fn(span);
        } finally {
          span.end();
        }
      }),
    async points(): Promise<Point[]> {
      const { resourceMetrics } = await reader.collect();
      return resourceMetrics.scopeMetrics.flatMap((scope) =>
        scope.metrics.flatMap((metric) =>
          (metric.dataPoints as DataPoint<number | Histogram>[]).map((p) => ({
            name: metric.descriptor.name,
            unit: metric.descriptor.unit,
            attributes: { ...p.attributes },
            value: typeof p.value === 'number' ? p.value : p.value.count,
            ...(typeof p.value === 'number' ? {} : { sum: p.value.sum }),
          })),
        ),
      );
    },
    async close() {
      await provider.shutdown();
      await meters.shutdown();
    },
  };
}

export type Otel = ReturnType<typeof otel>;

/** The parent span id of `span` (SDK 2.x names it parentSpanContext). */
export const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;

/** Everything exported, as text: names, attributes, events, status messages, metric names and attributes. */
export async function exported(o: Otel): Promise<string> {
  const spans = o.spans().map((s) => ({ name: s.name, attributes: s.attributes, events: s.events, status: s.status, links: s.links }));
  return JSON.stringify({ spans, points: await o.points() });
}

/** Fails when any of `secrets` (or a JWT-shaped run) appears in what was exported. */
export async function expectNoSecrets(o: Otel, secrets: string[]): Promise<void> {
  const text = await exported(o);
  expect(secrets.filter((secret) => text.includes(secret)).map((secret) => secret.slice(0, 6) + '...')).toEqual([]);
  expect(text).not.toMatch(/eyJ[\w-]+\.[\w-]+\.[\w-]*/);
}

export { trace };
