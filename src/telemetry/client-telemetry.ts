// The client's telemetry plug-in (`channel-sdk/telemetry`): `clientTelemetry({ tracer, meter })`
// gives createClient one CLIENT span per HTTP attempt with its traceparent, one span per
// tokenProvider call, and the token counters, through the core's hooks (core/telemetry-hooks.ts).
// Only an app that imports it carries this code (docs/maintainers/size.md).
import {
  activeContext,
  checkTelemetry,
  endSpan,
  SPAN_CLIENT,
  traceparent,
  type TelemetryAttributes,
  type TelemetryOptions,
  type TelemetrySpan,
} from '../shared/otel-api.js';
import { isChannelError } from '../errors/ChannelError.js';
import { dropRejection, quietly } from '../shared/report.js';
import type { ClientTelemetry, ClientTelemetryPlugin, TelemetryHost } from '../core/telemetry-hooks.js';

/**
 * The client's OpenTelemetry plug-in, for `createClient({ telemetry })` on both client entries:
 * a CLIENT span per attempt with a `traceparent` header, a span per tokenProvider call, and token
 * metrics. The SDK only calls the tracer and meter given; a tracer or meter that throws costs the
 * requests nothing. The server helpers take `{ tracer, meter }` as it is.
 * @example
 * import { clientTelemetry } from 'channel-sdk/telemetry';
 * createClient({ baseUrl, tokenProvider, telemetry: clientTelemetry({ tracer: trace.getTracer('channel-sdk') }) });
 */
export function clientTelemetry(options: TelemetryOptions): ClientTelemetryPlugin {
  // Checked now, so that a wrong tracer fails where it is written, not at the first createClient.
  const checked = checkTelemetry(options === undefined ? null : options, 'clientTelemetry') as TelemetryOptions;
  return { attach: (host) => createClientTelemetry(checked, host) };
}

/** The hooks of one client; `host.redact` masks the tokens it knows in URLs. */
function createClientTelemetry(options: TelemetryOptions, { redact, scope }: TelemetryHost): ClientTelemetry {
  const { tracer, meter, propagate } = options;
  // Names and units: docs/guide/telemetry.md.
  const counter = quietly((name: string, unit: string) => meter && meter.createCounter('channel.client.' + name, { unit }));
  const refreshes = counter('token.refreshes', '{call}');
  const replays = counter('unauthorized_replays', '{request}');
  const durations = quietly(() => meter && meter.createHistogram('channel.client.token_provider.duration', { unit: 's' }))();

  // The context of the call asking for a token, while it asks (synchronously): the provider span's parent.
  let asking: unknown;

  return {
    // A tracer or meter that throws (or answers something else than a span) costs the request
    // nothing: its span is lost, the request goes on.
    attempt: quietly(({ method, url, attempt: n, resend, headers, parent }) => {
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
      const span = tracer.startSpan(method, { kind: SPAN_CLIENT, attributes }, parent);
      // Each call on the span on its own: one of its methods that throws leaves no span open.
      const header = propagate !== false && quietly(traceparent)(span);
      if (header && !headers.traceparent) headers.traceparent = header;
      return quietly((status?: number, error?: string) => {
        try {
          if (status) span.setAttribute('http.response.status_code', status);
        } finally {
          endSpan(span, error || (status! >= 400 ? '' + status : ''));
        }
      });
    }, noop),
    provider({ forced, reason, run }) {
      const startedAt = Date.now();
      const attributes: TelemetryAttributes = { 'channel.force_refresh': forced, 'channel.token.reason': reason };
      let answer: ReturnType<typeof run> | undefined;
      const measure = (span?: TelemetrySpan) => {
        // Once: a tracer that runs this late or twice gets its span ended, and no second provider call.
        if (answer) return void (span && quietly(endSpan)(span));
        answer = run();
        // The span and the instruments copy the attributes they are given: error.type is added after.
        const done = quietly((error?: string) => {
          if (error) attributes['error.type'] = error;
          // The span first: an instrument that throws leaves no span open.
          if (span) endSpan(span, error);
          if (durations) durations.record((Date.now() - startedAt) / 1000, attributes);
        });
        // Only the SDK's own timeout is told apart: a provider's own error code could say anything.
        answer.then(
          () => done(),
          (error) => done(isChannelError(error) && error.code === 'TOKEN_PROVIDER_ERROR' ? 'timeout' : 'TOKEN_PROVIDER_ERROR'),
        );
      };
      // A counter that throws costs the span nothing.
      quietly(() => refreshes && refreshes.add(1, attributes))();
      quietly(() => tracer && dropRejection(tracer.startActiveSpan('channel.token_provider', { attributes }, asking, measure)))();
      // The provider is called once, under the span when the tracer ran `measure`, else without one.
      return answer || (measure(), answer as never);
    },
    replay: quietly(() => replays && replays.add(1)),
    active: quietly(() => activeContext(scope)),
    within(parent, f) {
      const before = asking;
      asking = parent;
      try {
        return f();
      } finally {
        asking = before;
      }
    },
  };
}

const noop = () => {};
