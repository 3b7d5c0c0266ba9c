// The inbox workers' spans and metrics (createRedisInbox's `telemetry` option): one CONSUMER span
// per callback run, active (the callback's own spans are its children), with its attempt and
// outcome. Built once per inbox, and only when `telemetry` is given. Never the body or the order.
import { errorType, failSpan, secondsHistogram, SPAN_CONSUMER, type TelemetryOptions, type TelemetrySpan } from '../../shared/otel-api.js';

/** `processed`; `retry` (failed, tried again later); `timeout` (past callbackTimeoutMs, retried); `dead_letter` (failed for good). */
export type RunOutcome = 'processed' | 'retry' | 'timeout' | 'dead_letter';

/** What one run learned on its way, for its span. */
export interface RunNote {
  event?: string;
  outcome?: RunOutcome;
  error?: unknown;
}

export interface InboxTelemetry {
  /** Runs one push's callback (and the storing of its outcome) in its span. */
  run<T>(attempt: number, run: (note: RunNote) => Promise<T>): Promise<T>;
}

export const INBOX_SPAN = 'channel.inbox.process';
export const INBOX_RUNS = 'channel.server.inbox.runs';
export const INBOX_RUN_DURATION = 'channel.server.inbox.run.duration';

/** The inbox's telemetry, or undefined without tracer or meter. */
export function inboxTelemetry(options: TelemetryOptions | undefined): InboxTelemetry | undefined {
  const { tracer, meter } = options || {};
  if (!tracer && !meter) return undefined;
  const runs = meter?.createCounter(INBOX_RUNS, { unit: '{run}', description: 'Inbox callback runs by channel.inbox.outcome' });
  const durations = secondsHistogram(meter, INBOX_RUN_DURATION, 'Inbox callback runs, from the start of the callback to its stored outcome');

  function finish(span: TelemetrySpan | undefined, note: RunNote, started: number): void {
    const attributes: Record<string, string> = {};
    if (note.outcome) attributes['channel.inbox.outcome'] = note.outcome;
    if (note.outcome && note.outcome !== 'processed') attributes['error.type'] = note.outcome === 'timeout' ? 'timeout' : errorType(note.error);
    runs?.add(1, attributes);
    durations?.record((performance.now() - started) / 1000, attributes);
    if (!span) return;
    for (const key in attributes) span.setAttribute(key, attributes[key]);
    if (note.event !== undefined) span.setAttribute('channel.webhook.event', /^[\w.:-]{1,64}$/.test(note.event) ? note.event : '_OTHER');
    if (attributes['error.type']) failSpan(span, attributes['error.type']);
    span.end();
  }

  return {
    run(attempt, run) {
      const go = (span?: TelemetrySpan) => {
        const started = performance.now();
        const note: RunNote = {};
        const done = () => finish(span, note, started);
        return run(note).finally(done);
      };
      return tracer ? tracer.startActiveSpan(INBOX_SPAN, { kind: SPAN_CONSUMER, attributes: { 'channel.inbox.attempt': attempt } }, go) : go();
    },
  };
}
