// @vitest-environment node
/**
 * The seam between the core and the telemetry plug-in (core/telemetry-hooks.ts) takes one object
 * per hook, as STYLE.md asks of hooks and spine functions (issue #44 items 1 and 3): the attempt
 * loop and the token obtainer name each field they hand the plug-in, so a field added reorders no
 * call. Driven here as the core drives it, on a tracer that records what it is asked.
 */
import { expect, test } from 'vitest';
import { clientTelemetry } from '../../src/telemetry.js';

function recordingTracer() {
  const started: Array<{ name: string; attributes: Record<string, unknown>; parent: unknown; ended: boolean }> = [];
  const span = (entry: (typeof started)[number]) => ({
    spanContext: () => ({ traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: 1 }),
    setAttribute: (key: string, value: unknown) => void (entry.attributes[key] = value),
    setStatus: () => {},
    end: () => void (entry.ended = true),
  });
  const tracer = {
    startSpan(name: string, options: { attributes: Record<string, unknown> }, parent?: unknown) {
      const entry = { name, attributes: { ...options.attributes }, parent, ended: false };
      started.push(entry);
      return span(entry);
    },
    startActiveSpan(name: string, options: { attributes: Record<string, unknown> }, parent: unknown, fn: (s: unknown) => unknown) {
      const entry = { name, attributes: { ...options.attributes }, parent, ended: false };
      started.push(entry);
      return fn(span(entry));
    },
  };
  return { tracer: tracer as never, started };
}

test('the attempt and provider hooks take one object, each field named (STYLE: hooks take one object)', async () => {
  const { tracer, started } = recordingTracer();
  const hooks = clientTelemetry({ tracer }).attach({ redact: (text) => text });
  const headers: Record<string, string> = {};
  const end = hooks.attempt({ method: 'POST', url: 'https://channel.example:8443/orders', attempt: 2, resend: 'unauthorized', headers, parent: 'the parent' });
  end(200);
  expect(started).toEqual([
    {
      name: 'POST',
      attributes: {
        'http.request.method': 'POST',
        'url.full': 'https://channel.example:8443/orders',
        'server.address': 'channel.example',
        'server.port': 8443,
        'http.request.resend_count': 1,
        'channel.resend_reason': 'unauthorized',
        'http.response.status_code': 200,
      },
      parent: 'the parent',
      ended: true,
    },
  ]);
  expect(headers.traceparent).toBe(`00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`);

  let runs = 0;
  const answer = await hooks.within('the caller', () => hooks.provider({ forced: true, reason: 'unauthorized', run: async () => (++runs, 'jwt') }));
  expect(answer).toBe('jwt');
  expect(runs).toBe(1);
  expect(started[1]).toEqual({
    name: 'channel.token_provider',
    attributes: { 'channel.force_refresh': true, 'channel.token.reason': 'unauthorized' },
    parent: 'the caller',
    ended: true,
  });
});
