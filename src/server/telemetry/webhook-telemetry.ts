// The webhook handler's spans and metrics (the `telemetry` option): one INTERNAL span per push, its
// stages (verify, dedup, inbox, callback) as child spans, the answer's status and outcome. Built once
// per handler, and only when `telemetry` is given. Nothing from the push but its event type.
import { errorType, failSpan, secondsHistogram, SPAN_INTERNAL, type TelemetryOptions, type TelemetrySpan } from '../../shared/otel-api.js';
import type { Core, Incoming, Outgoing } from '../http/route.js';

/** What one push learned on its way, for its span. */
export interface PushNote {
  event?: string;
}

/** A stage's child span: `end` with its attributes, `fail` with an error.type. */
export interface Stage {
  end(attributes?: Record<string, string | boolean | number>): void;
  fail(type: string, attributes?: Record<string, string | boolean | number>): void;
}

export interface WebhookTelemetry {
  /** The core, each push in its span (active, so that its stages are its children). */
  wrap(core: (incoming: Incoming, note: PushNote) => Promise<Outgoing>): Core;
  /** A child span of the push, or undefined without a tracer. */
  stage(name: 'verify' | 'dedup' | 'inbox'): Stage | undefined;
  /** Runs `run` in a child span of the push, active (the callback's own spans are its children). */
  active<T>(name: 'callback', run: (stage?: Stage) => Promise<T>): Promise<T>;
}

export const PUSH_SPAN = 'channel.webhook';
export const PUSHES = 'channel.server.webhook.pushes';
export const PUSH_DURATION = 'channel.server.webhook.duration';

/**
 * The `channel.webhook.outcome` of an answer, and its `error.type`: `processed` (the callback
 * succeeded), `queued` (stored in the inbox), `duplicate`, `rejected` (4xx: the push was refused),
 * `unavailable` (503: the service delivers it again), `failed` (5xx).
 */
function outcomeOf(out: Outgoing, reason: string | undefined): string {
  if (out.status < 300) return reason === 'duplicate' ? 'duplicate' : out.status === 202 ? 'queued' : 'processed';
  return out.status === 503 ? 'unavailable' : out.status < 500 ? 'rejected' : 'failed';
}

function stageOf(span: TelemetrySpan): Stage {
  const set = (attributes?: Record<string, string | boolean | number>) => {
    for (const key in attributes) span.setAttribute(key, attributes[key]);
  };
  return {
    end(attributes) {
      set(attributes);
      span.end();
    },
    fail(type, attributes) {
      set(attributes);
      failSpan(span, type);
      span.end();
    },
  };
}

/** An event type as the push names it, kept only when it looks like one (`logistics.updated`). */
const eventType = (value: string) => (/^[\w.:-]{1,64}$/.test(value) ? value : '_OTHER');

/**
 * The handler's telemetry, or undefined without tracer or meter. `reasonsOf` names the handler's
 * fixed answers (`signature`, `payload`, ...): the `error.type` of a push answered with one.
 */
export function webhookTelemetry(options: TelemetryOptions | undefined, reasonsOf: () => ReadonlyMap<Outgoing, string>): WebhookTelemetry | undefined {
  const { tracer, meter } = options || {};
  if (!tracer && !meter) return undefined;
  const reasons = reasonsOf();
  const pushes = meter?.createCounter(PUSHES, { unit: '{push}', description: 'Pushes answered, by http.response.status_code and channel.webhook.outcome' });
  const durations = secondsHistogram(meter, PUSH_DURATION, 'Time from a push to its answer');

  function finish(span: TelemetrySpan | undefined, note: PushNote, out: Outgoing, started: number): Outgoing {
    const reason = reasons.get(out);
    const outcome = outcomeOf(out, reason);
    const attributes: Record<string, string | number> = { 'http.response.status_code': out.status, 'channel.webhook.outcome': outcome };
    if (out.status >= 300) attributes['error.type'] = reason ?? String(out.status);
    pushes?.add(1, attributes);
    durations?.record((performance.now() - started) / 1000, attributes);
    if (span) {
      for (const key in attributes) span.setAttribute(key, attributes[key]);
      if (note.event !== undefined) span.setAttribute('channel.webhook.event', eventType(note.event));
      // A refused push (4xx) is the handler doing its job; a 5xx is a failure to look at.
      if (out.status >= 500) failSpan(span, attributes['error.type'] as string);
      span.end();
    }
    return out;
  }

  return {
    wrap(core) {
      return (incoming) => {
        const run = (span?: TelemetrySpan) => {
          const started = performance.now();
          const note: PushNote = {};
          return core(incoming, note).then(
            (out) => finish(span, note, out, started),
            (error: unknown) => {
              if (span) {
                failSpan(span, errorType(error));
                span.end();
              }
              throw error;
            },
          );
        };
        return tracer ? tracer.startActiveSpan(PUSH_SPAN, { kind: SPAN_INTERNAL }, run) : run();
      };
    },
    stage: (name) => (tracer ? stageOf(tracer.startSpan(PUSH_SPAN + '.' + name, { kind: SPAN_INTERNAL })) : undefined),
    active: (name, run) => (tracer ? tracer.startActiveSpan(PUSH_SPAN + '.' + name, { kind: SPAN_INTERNAL }, (span) => run(stageOf(span))) : run()),
  };
}
