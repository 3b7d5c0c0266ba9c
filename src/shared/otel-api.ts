// The parts of the OpenTelemetry API the SDK calls, typed structurally so that no OpenTelemetry
// package is a dependency (trace.getTracer() and metrics.getMeter() fit as they are): the server
// helpers' `telemetry: { tracer, meter }` and the client's plug-in (`clientTelemetry()`) take them.
import { checkKeys, describeValue, fail } from './check.js';

/** Attribute values the SDK sets: never a token, secret, signature or user id. */
export type TelemetryAttributes = Record<string, string | number | boolean>;

/** What the SDK calls on an OpenTelemetry `Span`. */
export interface TelemetrySpan {
  setAttribute(key: string, value: string | number | boolean): unknown;
  /** `code`: 2 is SpanStatusCode.ERROR. */
  setStatus(status: { code: number; message?: string }): unknown;
  spanContext(): { traceId: string; spanId: string; traceFlags: number; traceState?: { serialize(): string } };
  end(): void;
}

/** Options the SDK passes to `startSpan`; `kind` 0 INTERNAL, 1 SERVER, 2 CLIENT (SpanKind). */
export interface TelemetrySpanOptions {
  kind?: number;
  attributes?: TelemetryAttributes;
}

/** What the SDK calls on an OpenTelemetry `Tracer`: `trace.getTracer('channel-sdk')`. */
export interface TelemetryTracer {
  /** `context`: the parent's (an OpenTelemetry Context); the active one when undefined. */
  startSpan(name: string, options?: TelemetrySpanOptions, context?: unknown): TelemetrySpan;
  /** Runs `fn` with the span as the active one, so spans started inside (a provider's fetch) are its children. */
  startActiveSpan<F extends (span: TelemetrySpan) => unknown>(name: string, options: TelemetrySpanOptions, fn: F): ReturnType<F>;
  /** The same under `context` (an OpenTelemetry Context; the active one when undefined). */
  startActiveSpan<F extends (span: TelemetrySpan) => unknown>(name: string, options: TelemetrySpanOptions, context: unknown, fn: F): ReturnType<F>;
}

/** What the SDK calls on an OpenTelemetry `Meter`: `metrics.getMeter('channel-sdk')`. */
export interface TelemetryMeter {
  createCounter(name: string, options?: { description?: string; unit?: string }): { add(value: number, attributes?: TelemetryAttributes): void };
  createHistogram(
    name: string,
    options?: { description?: string; unit?: string; advice?: { explicitBucketBoundaries?: number[] } },
  ): { record(value: number, attributes?: TelemetryAttributes): void };
}

/**
 * The context active now, read from the OpenTelemetry API's registration on `scope` (the global
 * object, which every copy of `@opentelemetry/api` 1.x shares): undefined without one. Taken when
 * a call starts, it stays the parent of the call's spans across its awaits, where a browser's
 * context manager loses it.
 */
export function activeContext(scope: object | undefined): unknown {
  const api = scope && (scope as Record<symbol, { context?: { active(): unknown } } | undefined>)[Symbol.for('opentelemetry.js.api.1')];
  return api && api.context && api.context.active();
}

/** The `telemetry` option: a tracer, a meter, or both. Without it nothing is created and no header added. */
export interface TelemetryOptions {
  tracer?: TelemetryTracer;
  meter?: TelemetryMeter;
  /**
   * Send the W3C `traceparent` header naming each attempt's span (client) or the token call's
   * (exchange). In a browser it makes a cross-origin request list `traceparent` in its preflight:
   * set false when the service's CORS does not allow it. @default true
   */
  propagate?: boolean;
}

export const SPAN_INTERNAL = 0;
export const SPAN_SERVER = 1;
export const SPAN_CLIENT = 2;
export const SPAN_CONSUMER = 4;
export const STATUS_ERROR = 2;

/** Checks the `telemetry` option (of `owner`, a constructor, named in the message); undefined when absent. */
export function checkTelemetry(value: unknown, owner?: string): TelemetryOptions | undefined {
  const o = (value || {}) as Record<string, Record<string, unknown> | undefined>;
  const bad = (name: string, method: string) => o[name] !== undefined && typeof (o[name] && o[name][method]) !== 'function';
  if (value === undefined) return;
  if (typeof value === 'object') checkKeys(o, ['tracer', 'meter', 'propagate'], 'telemetry option');
  if (
    typeof value !== 'object' ||
    !value ||
    bad('tracer', 'startSpan') ||
    bad('tracer', 'startActiveSpan') ||
    bad('meter', 'createCounter') ||
    bad('meter', 'createHistogram') ||
    (o.propagate !== undefined && typeof o.propagate !== 'boolean')
  )
    fail(
      (owner ? owner + ': ' : '') +
        "telemetry must be { tracer, meter, propagate } (an OpenTelemetry Tracer and/or Meter, propagate true or false), e.g. { tracer: trace.getTracer('app') }; got " +
        describeValue(value) +
        (value && typeof value === 'object'
          ? ' with tracer ' + describeValue(o.tracer) + ', meter ' + describeValue(o.meter) + ', propagate ' + describeValue(o.propagate)
          : ''),
    );
  return value as TelemetryOptions;
}

/**
 * The W3C `traceparent` naming `span`, or undefined for a span with no trace (a no-op tracer
 * with nothing active gives all-zero ids: no header is sent then).
 */
export function traceparent(span: TelemetrySpan): string | undefined {
  const c = span.spanContext();
  // W3C's format only (32 and 16 lowercase hex digits, not all zeros): a tracer's malformed context
  // sends no header, rather than one the server refuses (a trace id of 100,000 digits: HTTP 431).
  return /^(?!0+$)[\da-f]{32}$/.test(c.traceId) && /^(?!0+$)[\da-f]{16}$/.test(c.spanId)
    ? '00-' + c.traceId + '-' + c.spanId + '-0' + (c.traceFlags & 1)
    : undefined;
}

/** Ends `span`, failed with `type` (an error code or an HTTP status) when there is one: `error.type` and the ERROR status. */
export function endSpan(span: TelemetrySpan, type?: string): void {
  // Ended even when marking it failed throws (a user's span): a span left open is a leak.
  try {
    if (type) failSpan(span, type);
  } finally {
    span.end();
  }
}

/** Marks `span` failed with `type` (an error code or an HTTP status): `error.type` and the ERROR status. */
export function failSpan(span: TelemetrySpan, type: string): void {
  span.setAttribute('error.type', type);
  span.setStatus({ code: STATUS_ERROR });
}

/** Bucket bounds in seconds for a duration histogram (OpenTelemetry's advice for HTTP durations). */
export const SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

/** A duration histogram in seconds (unit `s`, the buckets above), or undefined without a meter. */
export const secondsHistogram = (meter: TelemetryMeter | undefined, name: string, description: string) =>
  meter?.createHistogram(name, { unit: 's', description, advice: { explicitBucketBoundaries: SECONDS_BUCKETS } });

/** A low-cardinality `error.type` for a thrown value: a ChannelError's `code`, else the class name (never the message). */
export function errorType(error: unknown): string {
  try {
    const { code, name } = (error !== null && typeof error === 'object' ? error : {}) as { code?: unknown; name?: unknown };
    if (typeof code === 'string' && /^[A-Z][A-Z\d_]{0,63}$/.test(code)) return code;
    return typeof name === 'string' && /^[\w$.]{1,64}$/.test(name) ? name : '_OTHER';
  } catch {
    return '_OTHER'; // a value that throws when read (a getter, a revoked Proxy)
  }
}
