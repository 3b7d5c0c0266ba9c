// Traces and metrics of the client and of the token exchange it calls, printed to the console: swap the
// console exporters for OTLP ones (@opentelemetry/exporter-trace-otlp-http...) in production.
import { context, metrics, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, ConsoleSpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ConsoleMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { createClient } from 'channel-sdk';
import { createTokenExchange } from 'channel-sdk/server';
import { clientTelemetry } from 'channel-sdk/telemetry';

// The OpenTelemetry set-up an app makes once (@opentelemetry/sdk-node's NodeSDK does the same).
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new ConsoleSpanExporter())] }));
const reader = new PeriodicExportingMetricReader({ exporter: new ConsoleMetricExporter(), exportIntervalMillis: 60_000 });
metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));

// channel-sdk only calls the tracer and meter it is given.
const telemetry = { tracer: trace.getTracer('channel-sdk'), meter: metrics.getMeter('channel-sdk') };
const exchange = createTokenExchange({
  baseUrl: process.env.CHANNEL_BASE_URL!,
  accessKey: process.env.CHANNEL_ACCESS_KEY!,
  secretKey: process.env.CHANNEL_SECRET_KEY!,
  telemetry,
});
const client = createClient({
  baseUrl: process.env.CHANNEL_BASE_URL!,
  tokenProvider: async ({ forceRefresh }) => (await exchange.getToken('user-42', { forceRefresh })).accessToken,
  // The client's telemetry is a plug-in: an app that does not import it carries none of its code.
  telemetry: clientTelemetry(telemetry),
});

// The client's spans are children of the span active when a call is made.
await trace.getTracer('my-app').startActiveSpan('show order', async (span) => {
  const order = await client.get<{ order_no: string }>('/open/api/v1/sdk/orders/SO20240601001');
  console.log('order', order.order_no);
  span.end();
});
await reader.forceFlush();
