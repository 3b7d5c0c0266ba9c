// The user's tracer and meter as the server's telemetry calls them: nothing they do (throw from
// any method, answer something else than a span, never run the function given to
// startActiveSpan) reaches a push, a token or a worker. A span or a point is lost; the work goes
// on, run exactly once. The client guards its own calls the same way (telemetry/client-telemetry.ts).
import { fail } from '../../shared/check.js';
import {
  checkTelemetry,
  type TelemetryAttributes,
  type TelemetryMeter,
  type TelemetryOptions,
  type TelemetrySpan,
  type TelemetrySpanOptions,
} from '../../shared/otel-api.js';
import { dropRejection, quietly } from '../../shared/report.js';

/** What the server's telemetry calls on a tracer: startSpan, and startActiveSpan without a context. */
export interface GuardedTracer {
  startSpan(name: string, options?: TelemetrySpanOptions): TelemetrySpan;
  startActiveSpan<T>(name: string, options: TelemetrySpanOptions, fn: (span: TelemetrySpan) => T): T;
}

const NO_CONTEXT = { traceId: '0'.repeat(32), spanId: '0'.repeat(16), traceFlags: 0 };
const HEX = /^[\da-f]+$/;

/** A span whose methods never throw; its context is all zeros (no traceparent) unless well formed. */
function guardSpan(span: unknown): TelemetrySpan {
  const s = span as TelemetrySpan;
  return {
    setAttribute: quietly((key: string, value: string | number | boolean) => s.setAttribute(key, value)),
    setStatus: quietly((status: { code: number; message?: string }) => s.setStatus(status)),
    end: quietly(() => s.end()),
    spanContext: quietly(() => {
      const c = s.spanContext();
      return typeof c.traceId === 'string' && HEX.test(c.traceId) && typeof c.spanId === 'string' && HEX.test(c.spanId) && typeof c.traceFlags === 'number'
        ? c
        : NO_CONTEXT;
    }, NO_CONTEXT),
  };
}

const noSpan = guardSpan(undefined);

function guardTracer(tracer: NonNullable<TelemetryOptions['tracer']>): GuardedTracer {
  return {
    startSpan: (name, options) => quietly(() => guardSpan(tracer.startSpan(name, options)), noSpan)(),
    startActiveSpan<T>(name: string, options: TelemetrySpanOptions, fn: (span: TelemetrySpan) => T): T {
      // `fn` runs once: inside the tracer's call when it runs it, else here without a span. What
      // `fn` throws is the caller's; what the tracer throws around it is dropped.
      let outcome: { value: T } | { error: unknown } | undefined;
      const run = (span: unknown) => {
        if (!outcome) {
          try {
            outcome = { value: fn(guardSpan(span)) };
          } catch (error) {
            outcome = { error };
          }
        }
        return 'value' in outcome ? outcome.value : undefined;
      };
      quietly(() => dropRejection(tracer.startActiveSpan(name, options, run)))();
      if (!outcome) run(undefined);
      if ('error' in outcome!) throw outcome.error;
      return outcome!.value;
    },
  };
}

function guardMeter(meter: TelemetryMeter): TelemetryMeter {
  return {
    createCounter(name, options) {
      const counter = quietly(() => meter.createCounter(name, options))();
      return { add: quietly((value: number, attributes?: TelemetryAttributes) => counter.add(value, attributes)) };
    },
    createHistogram(name, options) {
      const histogram = quietly(() => meter.createHistogram(name, options))();
      return { record: quietly((value: number, attributes?: TelemetryAttributes) => histogram.record(value, attributes)) };
    },
  };
}

/** The `telemetry` option with a tracer and a meter that never throw; undefined without either. */
export function guardTelemetry(options: TelemetryOptions | undefined): { tracer?: GuardedTracer; meter?: TelemetryMeter; propagate?: boolean } | undefined {
  const { tracer, meter, propagate } = options || {};
  if (!tracer && !meter) return undefined;
  return { tracer: tracer && guardTracer(tracer), meter: meter && guardMeter(meter), propagate };
}

/**
 * Checks a server helper's `telemetry` option (`owner` names the helper): `{ tracer, meter, propagate }`
 * as it is. The client's plug-in, `clientTelemetry(...)`, given here (the client's guide shows it
 * beside `telemetry:`) is named for what it is, rather than refused as an unknown key "attach".
 */
export function checkServerTelemetry(value: unknown, owner: string): TelemetryOptions | undefined {
  if (value && typeof (value as { attach?: unknown }).attach === 'function')
    fail(
      owner +
        ": telemetry takes { tracer, meter } itself, e.g. { tracer: trace.getTracer('app') }; got clientTelemetry(...), the plug-in of createClient from 'channel-sdk/telemetry'",
    );
  return checkTelemetry(value, owner);
}
