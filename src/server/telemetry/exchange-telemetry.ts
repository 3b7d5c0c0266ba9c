// The token exchange's spans and metrics (the `telemetry` option): one INTERNAL span per getToken,
// a child for the wait on another instance's lock, a CLIENT span per token call with the W3C
// traceparent header. Built once per exchange, and only when `telemetry` is given. Nothing secret:
// no user id, token, access or secret key in a name, attribute or metric.
import {
  errorType,
  failSpan,
  secondsHistogram,
  SPAN_CLIENT,
  SPAN_INTERNAL,
  traceparent,
  type TelemetryOptions,
  type TelemetrySpan,
} from '../../shared/otel-api.js';

/** `hit`: the cache answered; `miss`: it had no fresh token; `bypass`: not read (a forced refresh, or a cache failing or skipped). */
export type CacheOutcome = 'hit' | 'miss' | 'bypass';

/** What one getToken learned on its way, for its span; `joined` is the note of the call whose flight it shared. */
export interface CallNote {
  cache?: CacheOutcome;
  joined?: CallNote;
}

/** One token call in progress: its header, what answered, and its end. */
export interface ServiceCall {
  /** The `traceparent` header for the request, when the span has a trace. */
  readonly traceparent?: string;
  status?: number;
  timedOut?: boolean;
  end(error?: unknown): void;
}

export interface ExchangeTelemetry {
  /** Runs one getToken in its span, active, so that the lock wait and the token call are its children. */
  call<T>(force: boolean, run: (note: CallNote) => Promise<T>): Promise<T>;
  /** Starts the wait for another instance's lock; the function ends it: `token` (its token came), `acquired`, `timeout` or `failed`. */
  lockWait(): (outcome: 'token' | 'acquired' | 'timeout' | 'failed') => void;
  /** Starts a token call (signing, request, body: what `timeout` bounds). */
  service(): ServiceCall;
}

/** The span and metric names (docs/guide/telemetry.md). */
export const EXCHANGE_SPAN = 'channel.token_exchange';
export const LOCK_WAIT_SPAN = 'channel.token_exchange.lock_wait';
export const CACHE_OUTCOMES = 'channel.server.token.cache_outcomes';
export const CALL_DURATION = 'channel.server.token.call.duration';

const noop = () => {};

/** The exchange's telemetry for the token endpoint `url`, or undefined without tracer or meter. */
export function exchangeTelemetry(options: TelemetryOptions | undefined, url: string): ExchangeTelemetry | undefined {
  const { tracer, meter, propagate } = options || {};
  if (!tracer && !meter) return undefined;
  const outcomes = meter?.createCounter(CACHE_OUTCOMES, { unit: '{call}', description: 'getToken calls by cache outcome (channel.cache)' });
  const durations = secondsHistogram(meter, CALL_DURATION, "Token calls to the service's token endpoint: signing, request and body");
  const where = new URL(url);
  const port = where.port ? Number(where.port) : where.protocol === 'https:' ? 443 : 80;
  const clientAttributes = {
    'http.request.method': 'POST',
    'url.full': url,
    'server.address': where.hostname.replace(/^\[|\]$/g, ''),
    'server.port': port,
  };
  const clientName = 'POST ' + where.pathname;

  function finish(note: CallNote, span: TelemetrySpan | undefined, error: unknown, failed: boolean): void {
    const cache = note.joined?.cache ?? note.cache;
    if (cache) outcomes?.add(1, { 'channel.cache': cache });
    if (!span) return;
    if (cache) span.setAttribute('channel.cache', cache);
    if (note.joined) span.setAttribute('channel.token.joined', true);
    if (failed) failSpan(span, errorType(error));
    span.end();
  }

  function settle<T>(note: CallNote, span: TelemetrySpan | undefined, run: Promise<T>): Promise<T> {
    return run.then(
      (value) => (finish(note, span, undefined, false), value),
      (error: unknown) => {
        finish(note, span, error, true);
        throw error;
      },
    );
  }

  return {
    call(force, run) {
      const note: CallNote = force ? { cache: 'bypass' } : {};
      if (!tracer) return settle(note, undefined, run(note));
      return tracer.startActiveSpan(EXCHANGE_SPAN, { kind: SPAN_INTERNAL, attributes: { 'channel.force_refresh': force } }, (span) =>
        settle(note, span, run(note)),
      );
    },
    lockWait() {
      if (!tracer) return noop;
      const span = tracer.startSpan(LOCK_WAIT_SPAN, { kind: SPAN_INTERNAL });
      return (outcome) => {
        span.setAttribute('channel.lock.outcome', outcome);
        span.end();
      };
    },
    service() {
      const started = performance.now();
      const span = tracer?.startSpan(clientName, { kind: SPAN_CLIENT, attributes: clientAttributes });
      const call: ServiceCall = {
        traceparent: span && propagate !== false ? traceparent(span) : undefined,
        end(error) {
          const status = call.status;
          const type = error === undefined ? undefined : call.timedOut ? 'timeout' : status !== undefined && status >= 400 ? String(status) : errorType(error);
          if (durations) {
            const attributes: Record<string, string | number> = {};
            if (status !== undefined) attributes['http.response.status_code'] = status;
            if (type) attributes['error.type'] = type;
            durations.record((performance.now() - started) / 1000, attributes);
          }
          if (!span) return;
          if (status !== undefined) span.setAttribute('http.response.status_code', status);
          if (type) failSpan(span, type);
          span.end();
        },
      };
      return call;
    },
  };
}
