// A metric reader for tests: cumulative, collected on demand (`await reader.collect()`), so a test
// reads the real OpenTelemetry SDK's instruments when it wants to, without an exporter or a timer.
import { AggregationTemporality, MetricReader } from '@opentelemetry/sdk-metrics';

export class TestMetricReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected async onShutdown() {}
  protected async onForceFlush() {}
}
