/**
 * channel-sdk/telemetry: the client's OpenTelemetry plug-in, for both client entries
 * (`createClient({ telemetry: clientTelemetry({ tracer, meter }) })`). Its own entry, so that an
 * app that traces nothing carries none of it. No OpenTelemetry package is a dependency: the
 * tracer and meter are typed by the parts the SDK calls.
 * @packageDocumentation
 */
export { clientTelemetry } from './telemetry/client-telemetry.js';
export type { ClientTelemetryPlugin } from './core/telemetry-hooks.js';
export type { TelemetryMeter, TelemetryOptions, TelemetrySpan, TelemetrySpanOptions, TelemetryTracer, TelemetryAttributes } from './shared/otel-api.js';
