// Type tests, compiled by `npm run typecheck:examples` (TS 7 and TS 5.9, strict,
// exactOptionalPropertyTypes) against the built package: the OpenTelemetry API's tracer and
// meter, and the SDK's, fit `clientTelemetry()` and the server helpers' `telemetry` option as they
// are (typed structurally); the client takes the plug-in, not the options.
import { metrics, trace } from '@opentelemetry/api';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { createClient, type ClientTelemetryPlugin } from 'channel-sdk';
import { createClient as createHostClient } from 'channel-sdk/miniprogram';
import { createTokenExchange } from 'channel-sdk/server';
import { clientTelemetry, type TelemetryOptions } from 'channel-sdk/telemetry';

const fromApi: TelemetryOptions = { tracer: trace.getTracer('channel-sdk'), meter: metrics.getMeter('channel-sdk') };
const fromSdk: TelemetryOptions = {
  tracer: new BasicTracerProvider().getTracer('channel-sdk'),
  meter: new MeterProvider().getMeter('channel-sdk'),
  propagate: false,
};
const tokenProvider = async () => 'a.b.c';
createClient({ baseUrl: 'https://channel.example.com', tokenProvider, telemetry: clientTelemetry(fromApi) });
const plugin: ClientTelemetryPlugin = clientTelemetry(fromSdk);
createHostClient({ baseUrl: 'https://channel.example.com', tokenProvider, telemetry: plugin });
createClient({ baseUrl: 'https://channel.example.com', tokenProvider, telemetry: clientTelemetry({ tracer: trace.getTracer('only-traces') }) });
createTokenExchange({ baseUrl: 'https://channel.example.com', accessKey: 'ak', secretKey: 'sk', telemetry: fromApi });
// @ts-expect-error -- a tracer without startSpan is not a Tracer
clientTelemetry({ tracer: {} });
// @ts-expect-error -- the client takes the plug-in: clientTelemetry({ tracer, meter })
createClient({ baseUrl: 'https://channel.example.com', tokenProvider, telemetry: fromApi });
