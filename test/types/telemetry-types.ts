// Type tests, compiled by `npm run typecheck:examples` (TS 7 and TS 5.9, strict,
// exactOptionalPropertyTypes) against the built package: the OpenTelemetry API's tracer and
// meter, and the SDK's, fit the `telemetry` option as they are (it is typed structurally).
import { metrics, trace } from '@opentelemetry/api';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { createClient, type TelemetryOptions } from 'channel-sdk';
import { createClient as createHostClient } from 'channel-sdk/miniprogram';

const fromApi: TelemetryOptions = { tracer: trace.getTracer('channel-sdk'), meter: metrics.getMeter('channel-sdk') };
const fromSdk: TelemetryOptions = {
  tracer: new BasicTracerProvider().getTracer('channel-sdk'),
  meter: new MeterProvider().getMeter('channel-sdk'),
  propagate: false,
};
const tokenProvider = async () => 'a.b.c';
createClient({ baseUrl: 'https://channel.example.com', tokenProvider, telemetry: fromApi });
createHostClient({ baseUrl: 'https://channel.example.com', tokenProvider, telemetry: fromSdk });
createClient({ baseUrl: 'https://channel.example.com', tokenProvider, telemetry: { tracer: trace.getTracer('only-traces') } });
// @ts-expect-error -- a tracer without startSpan is not a Tracer
createClient({ baseUrl: 'https://channel.example.com', tokenProvider, telemetry: { tracer: {} } });
