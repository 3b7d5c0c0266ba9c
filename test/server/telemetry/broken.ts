// Tracers and meters that break in each way a user's may (issue #43 item 3), over the real
// OpenTelemetry SDK where a real part can be made to fail: a span processor and a metric view
// that throw, the SDK's objects with every method throwing, and a tracer that never runs the
// function it is given.
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { TelemetryOptions } from '../../../src/server-node.js';

const down = () => {
  throw new Error('telemetry down');
};

/** `target` with every method throwing. */
const throwing = <T extends object>(target: T): T =>
  new Proxy(target, { get: (t, key) => (typeof (t as Record<PropertyKey, unknown>)[key] === 'function' ? down : (t as Record<PropertyKey, unknown>)[key]) });

/** The real SDK's tracer and meter; `broken` breaks the pipeline behind them. */
function sdk(broken = false) {
  const processor: SpanProcessor = { onStart: down, onEnd: down, forceFlush: async () => {}, shutdown: async () => {} };
  const tracer = new BasicTracerProvider({ spanProcessors: broken ? [processor] : [] }).getTracer('channel-sdk');
  const views = broken ? [{ instrumentName: '*', attributesProcessors: [{ process: down }] }] : [];
  const meter = new MeterProvider({ views }).getMeter('channel-sdk');
  return { tracer, meter };
}

/** `span`, answering a context no traceparent may carry. */
const withContext = <T extends object>(span: T): T =>
  new Proxy(span, {
    get: (t, key) =>
      key === 'spanContext' ? () => ({ traceId: 'a'.repeat(100_000), spanId: 'abc', traceFlags: 1 }) : (t as Record<PropertyKey, unknown>)[key],
  });

/** [what breaks, the telemetry option]. */
export function brokenTelemetries(): Array<[string, TelemetryOptions]> {
  const real = sdk();
  const spanned = (fn: (span: unknown) => unknown) => (span: unknown) => fn(throwing(span as object));
  return [
    ['the real SDK with a span processor and a metric view that throw', sdk(true)],
    ['a tracer and a meter that throw on every method', { tracer: throwing(real.tracer), meter: throwing(real.meter) }],
    [
      'spans and instruments that throw on every method',
      {
        tracer: {
          startSpan: (name, options) => throwing(real.tracer.startSpan(name, options)),
          startActiveSpan: ((name: string, options: object, fn: (span: unknown) => unknown) =>
            real.tracer.startActiveSpan(name, options, spanned(fn))) as never,
        },
        meter: {
          createCounter: (name, options) => throwing(real.meter.createCounter(name, options)),
          createHistogram: (name, options) => throwing(real.meter.createHistogram(name, options)),
        },
      },
    ],
    [
      'spans whose context is malformed: a trace id of 100,000 hex digits, a span id of 3 (the traceparent it would make no server takes)',
      {
        tracer: {
          startSpan: (name, options) => withContext(real.tracer.startSpan(name, options)),
          startActiveSpan: ((name: string, options: object, fn: (span: unknown) => unknown) =>
            real.tracer.startActiveSpan(name, options, (span) => fn(withContext(span)))) as never,
        },
        meter: real.meter,
      },
    ],
    [
      'a tracer that never runs the function it is given and answers something else than a span',
      {
        tracer: { startSpan: () => ({}) as never, startActiveSpan: (() => undefined) as never },
        meter: { createCounter: () => ({}) as never, createHistogram: () => null as never },
      },
    ],
    [
      'an async wrapper whose startActiveSpan rejects (its own setup failed) without running the function',
      {
        tracer: { startSpan: (name, options) => real.tracer.startSpan(name, options), startActiveSpan: (async () => down()) as never },
        meter: real.meter,
      },
    ],
    [
      'a thenable over a rejected setup whose then forwards onFulfilled only (a rejected promise back), the function never run',
      {
        tracer: {
          startSpan: (name, options) => real.tracer.startSpan(name, options),
          startActiveSpan: (() => {
            const setup = Promise.reject(new Error('exporter down'));
            // eslint-disable-next-line unicorn/no-thenable -- the tracer's own thenable is what is tested
            return { then: (ok: (v: unknown) => unknown) => setup.then(ok) };
          }) as never,
        },
        meter: real.meter,
      },
    ],
  ];
}

/** Collects the unhandled rejections while `run` runs (and a little after). */
export async function unhandledDuring(run: () => Promise<void>): Promise<unknown[]> {
  const seen: unknown[] = [];
  const listener = (reason: unknown) => void seen.push(reason);
  process.on('unhandledRejection', listener);
  try {
    await run();
    await new Promise((resolve) => setTimeout(resolve, 50));
  } finally {
    process.off('unhandledRejection', listener);
  }
  return seen;
}
