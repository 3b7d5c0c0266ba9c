// The `telemetry` option the benches pass (issue #34): the API's no-op tracer (what
// trace.getTracer() answers before an SDK is registered), or the OpenTelemetry SDK's tracer (a
// batch processor and an exporter that drops) and meter (no reader).
/** The no-op tracer, or (`withSdk`) the SDK's tracer and meter. */
export async function benchTelemetry(withSdk) {
  const { context, trace } = await import('@opentelemetry/api');
  if (!withSdk) return { tracer: trace.getTracer('bench') };
  const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
  const { BasicTracerProvider, BatchSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
  const { MeterProvider } = await import('@opentelemetry/sdk-metrics');
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const drop = { export: (_spans, done) => done({ code: 0 }), shutdown: async () => {} };
  const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(drop)] });
  return { tracer: provider.getTracer('bench'), meter: new MeterProvider().getMeter('bench') };
}
