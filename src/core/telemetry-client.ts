// The client's spans and metrics (`telemetry: { tracer, meter }`): one CLIENT span per HTTP
// attempt with its traceparent, one span per tokenProvider call, and the token counters. Built
// only when the option is given: without it the attempt loop and the obtainer skip one `if`.
// Kept small: every mini-program bundle carries it, traced or not (docs/maintainers/size.md).
import { endSpan, SPAN_CLIENT, traceparent, type TelemetryAttributes, type TelemetryOptions, type TelemetrySpan } from '../shared/telemetry.js';
import { TokenProviderError } from '../errors/TokenProviderError.js';
import type { TokenReason } from './types.js';

export interface ClientTelemetry {
  /**
   * Starts the span of attempt `n` of `method url` (`resend`: why it follows another, the retry
   * event's reason) and names it in `headers.traceparent` unless the caller set one. Returns
   * what ends it: with the status, or with the failure's error code.
   */
  attempt(method: string, url: string, n: number, resend: string | undefined, headers: Record<string, string>): (status?: number, error?: string) => void;
  /** Runs one tokenProvider call under its span, timed and counted. */
  provider<T>(forced: boolean, reason: TokenReason, run: () => Promise<T>): Promise<T>;
  /** A 401 is being replayed with a new token. */
  replay(): void;
}

/** The telemetry of a client, or undefined without the option; `redact` masks the tokens it knows in URLs. */
export function createClientTelemetry(options: TelemetryOptions | undefined, redact: (text: string) => string): ClientTelemetry | undefined {
  if (!options) return;
  const { tracer, meter, propagate } = options;
  // Names and units: docs/guide/telemetry.md.
  const counter = (name: string, unit: string) => meter && meter.createCounter('channel.client.' + name, { unit });
  const refreshes = counter('token.refreshes', '{call}');
  const replays = counter('unauthorized_replays', '{request}');
  const durations = meter && meter.createHistogram('channel.client.token_provider.duration', { unit: 's' });

  return {
    attempt(method, url, n, resend, headers) {
      if (!tracer) return noop;
      // url.full without credentials: the tokens the client knows, and query values whose name says secret.
      const full = redact(url).replace(/([?&][^=&#]*(sig|token|key|secret|pass|auth|code)[^=&#]*=)[^&#]*/gi, '$1REDACTED');
      const host = /\/\/(\[[^\]]*\]|[^/:?#]*):?(\d*)/.exec(full) as RegExpExecArray;
      const attributes: TelemetryAttributes = {
        'http.request.method': method,
        'url.full': full,
        'server.address': host[1],
        'server.port': +host[2] || (/^https/i.test(full) ? 443 : 80),
      };
      if (n > 1) {
        attributes['http.request.resend_count'] = n - 1;
        attributes['channel.resend_reason'] = resend as string;
      }
      const span = tracer.startSpan(method, { kind: SPAN_CLIENT, attributes });
      const header = propagate !== false && traceparent(span);
      if (header && !headers.traceparent) headers.traceparent = header;
      return (status, error) => {
        if (status) span.setAttribute('http.response.status_code', status);
        endSpan(span, error || (status! >= 400 ? '' + status : ''));
      };
    },
    provider(forced, reason, run) {
      const startedAt = Date.now();
      const attributes: TelemetryAttributes = { 'channel.force_refresh': forced, 'channel.token.reason': reason };
      if (refreshes) refreshes.add(1, attributes);
      const measure = (span?: TelemetrySpan) => {
        const answer = run();
        // The span and the instruments copy the attributes they are given: error.type is added after.
        const done = (error?: string) => {
          if (error) attributes['error.type'] = error;
          if (durations) durations.record((Date.now() - startedAt) / 1000, attributes);
          if (span) endSpan(span, error);
        };
        // Only the SDK's own timeout is told apart: a provider's own error code could say anything.
        answer.then(
          () => done(),
          (error) => done(error instanceof TokenProviderError ? 'timeout' : 'TOKEN_PROVIDER_ERROR'),
        );
        return answer;
      };
      return tracer ? tracer.startActiveSpan('channel.token_provider', { attributes }, measure) : measure();
    },
    replay() {
      if (replays) replays.add(1);
    },
  };
}

const noop = () => {};
