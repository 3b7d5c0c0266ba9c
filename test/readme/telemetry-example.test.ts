/**
 * examples/telemetry.ts (docs/guide/telemetry.md) run as written against the sandbox, with the
 * real OpenTelemetry SDK and its console exporters: what it prints is what a reader sees.
 */
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/testing.js';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
  vi.stubEnv('CHANNEL_BASE_URL', sandbox.url);
  vi.stubEnv('CHANNEL_ACCESS_KEY', sandbox.credentials.accessKey);
  vi.stubEnv('CHANNEL_SECRET_KEY', sandbox.credentials.secretKey);
});
afterAll(async () => {
  vi.unstubAllEnvs();
  await sandbox?.close();
});

test('examples/telemetry.ts prints the call span, its attempt, the provider call with its exchange and token call, and the metrics; nothing secret', async () => {
  const log = vi.spyOn(console, 'log').mockImplementation(() => {});
  const dir = vi.spyOn(console, 'dir').mockImplementation(() => {});
  try {
    await import(/* @vite-ignore */ new URL('../../examples/telemetry.ts', import.meta.url).href);
    expect(log.mock.calls).toContainEqual(['order', 'SO20240601001']);
    type Printed = { name?: string; id?: string; parentSpanContext?: { spanId: string }; attributes?: Record<string, unknown>; descriptor?: { name: string } };
    const printed = dir.mock.calls.map((c) => c[0] as Printed);
    const span = (name: string) => printed.find((p) => p.name === name) as Printed;
    const call = span('show order');
    const attempt = span('GET');
    expect(attempt.parentSpanContext?.spanId).toBe(call.id);
    expect(attempt.attributes).toMatchObject({
      'http.request.method': 'GET',
      'http.response.status_code': 200,
      'url.full': sandbox.url + '/open/api/v1/sdk/orders/SO20240601001',
    });
    const provider = span('channel.token_provider');
    expect(provider.attributes).toMatchObject({ 'channel.force_refresh': false, 'channel.token.reason': 'initial' });
    // One trace from the page's call to the service's token endpoint: the provider's exchange
    // under the provider span, its token call under the exchange.
    const exchange = span('channel.token_exchange');
    expect([provider.parentSpanContext?.spanId, exchange.parentSpanContext?.spanId]).toEqual([attempt.parentSpanContext?.spanId, provider.id]);
    expect(exchange.attributes).toMatchObject({ 'channel.cache': 'miss' });
    expect(span('POST /open/api/v1/sdk/tokens').parentSpanContext?.spanId).toBe(exchange.id);
    expect(printed.map((p) => p.descriptor?.name)).toContain('channel.client.token.refreshes');
    const everything = JSON.stringify(printed);
    for (const secret of [sandbox.credentials.secretKey, sandbox.credentials.accessKey, 'user-42', 'eyJ']) expect(everything).not.toContain(secret);
  } finally {
    log.mockRestore();
    dir.mockRestore();
  }
});
