// The server helpers take `telemetry: { tracer, meter }` as it is (issue #44 item 1); the client's
// plug-in, `clientTelemetry(...)`, is what the client's guide shows beside `telemetry:`. Given to a
// server helper, it is a ConfigError that names it and says what to pass, the mirror of the
// client's message for a plain `{ tracer, meter }` (test/core/telemetry-client.test.ts).
import { expect, test } from 'vitest';
import { ConfigError, createTokenExchange, createWebhookHandler } from '../../../src/server-node.js';
import { inboxSettings } from '../../../src/server/webhooks/inbox/inbox-options.js';
import { clientTelemetry } from '../../../src/telemetry.js';

const tracer = { startSpan: () => ({}), startActiveSpan: () => ({}) } as never;

test('clientTelemetry(...) given to createTokenExchange, createWebhookHandler or createRedisInbox is a ConfigError that says to pass { tracer, meter } itself', () => {
  const plugin = clientTelemetry({ tracer });
  const helpers: Array<[string, () => unknown]> = [
    ['createTokenExchange', () => createTokenExchange({ baseUrl: 'https://channel.example', accessKey: 'ak', secretKey: 'sk', telemetry: plugin as never })],
    ['createWebhookHandler', () => createWebhookHandler({ secret: 'whsec', onLogisticsUpdated: () => {}, telemetry: plugin as never })],
    ['createRedisInbox', () => inboxSettings({ telemetry: plugin as never }, '')],
  ];
  for (const [owner, create] of helpers) {
    expect(create).toThrow(ConfigError);
    expect(create).toThrow(
      `[channel-sdk] ${owner}: telemetry takes { tracer, meter } itself, e.g. { tracer: trace.getTracer('app') }; got clientTelemetry(...), the plug-in of createClient from 'channel-sdk/telemetry'`,
    );
  }
  // The shapes they take are unchanged.
  expect(() => createTokenExchange({ baseUrl: 'https://channel.example', accessKey: 'ak', secretKey: 'sk', telemetry: { tracer } })).not.toThrow();
  expect(() => inboxSettings({ telemetry: { tracer, propagate: false } }, '')).not.toThrow();
  expect(() => inboxSettings({ telemetry: { tracer, attach: 1 } as never }, '')).toThrow(/unknown telemetry option "attach"/);
});
