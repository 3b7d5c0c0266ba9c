/**
 * The webhook handler's `telemetry` option with the real OpenTelemetry SDK: the sandbox pushes to
 * the handler on node:http (under a SERVER span of the kind a framework's instrumentation makes),
 * and each push gets one INTERNAL span with its stages, status and outcome, and its metrics.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import {
  ConfigError,
  createMemoryDedupStore,
  createWebhookHandler,
  signWebhookBody,
  toNodeHandler,
  type WebhookHandlerOptions,
} from '../../../src/server-node.js';
import { startSandbox, type Sandbox } from '../../../src/testing.js';
import { sampleLogistics } from '../helpers.js';
import { expectNoSecrets, otel, parentOf, type Otel } from './otel.js';

const SECRET = 'whsec_telemetry_7f3a9c';
const INTERNAL = 0;
const SERVER = 1;
const ERROR = 2;
let sandbox: Sandbox;
let o: Otel;
let server: Server | undefined;
beforeAll(async () => {
  sandbox = await startSandbox({ webhookSecret: SECRET });
});
afterAll(async () => {
  await sandbox?.close();
});
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
  await o?.close();
});

/** The handler on node:http, each request in a SERVER span as @opentelemetry/instrumentation-http makes. */
async function serve(options: Partial<WebhookHandlerOptions>): Promise<string> {
  const handler = toNodeHandler(
    createWebhookHandler({ secret: SECRET, onLogisticsUpdated: () => {}, onError: () => {}, telemetry: o.telemetry, ...options } as WebhookHandlerOptions),
  );
  server = createServer((req, res) =>
    o.tracer.startActiveSpan('POST /webhooks', { kind: SERVER }, (span) => {
      res.on('finish', () => span.end());
      return handler(req, res);
    }),
  );
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return 'http://127.0.0.1:' + (server!.address() as AddressInfo).port + '/webhooks';
}

const push = (t: Otel) => t.named('channel.webhook');
const childrenOf = (t: Otel, parent: { spanContext(): { spanId: string } }) =>
  t
    .spans()
    .filter((s) => parentOf(s) === parent.spanContext().spanId)
    .map((s) => [s.name, s.attributes]);

test('a valid push, its repeat, a forged one: statuses, outcomes, stages, under the request span', async () => {
  o = otel();
  const url = await serve({ dedup: createMemoryDedupStore() });
  expect((await sandbox.pushLogistics(sampleLogistics, { url })).status).toBe(200);
  expect((await sandbox.pushLogistics(sampleLogistics, { url })).status).toBe(200);
  expect((await sandbox.pushLogistics(sampleLogistics, { url, tamper: true })).status).toBe(401);
  const spans = push(o);
  expect(spans.map((s) => [s.kind, s.attributes])).toEqual([
    [INTERNAL, { 'http.response.status_code': 200, 'channel.webhook.outcome': 'processed', 'channel.webhook.event': 'logistics.updated' }],
    [INTERNAL, { 'http.response.status_code': 200, 'channel.webhook.outcome': 'duplicate', 'channel.webhook.event': 'logistics.updated' }],
    [INTERNAL, { 'http.response.status_code': 401, 'channel.webhook.outcome': 'rejected', 'error.type': 'signature' }],
  ]);
  // A refused push is no failure of the handler: the status stays unset.
  expect(spans.map((s) => s.status.code)).toEqual([0, 0, 0]);
  const requests = o.named('POST /webhooks');
  expect(spans.map(parentOf)).toEqual(requests.map((s) => s.spanContext().spanId));
  expect(childrenOf(o, spans[0])).toEqual([
    ['channel.webhook.verify', { 'channel.webhook.verified': true }],
    ['channel.webhook.dedup', { 'channel.dedup.state': 'claimed' }],
    ['channel.webhook.callback', {}],
  ]);
  expect(childrenOf(o, spans[1])).toEqual([
    ['channel.webhook.verify', { 'channel.webhook.verified': true }],
    ['channel.webhook.dedup', { 'channel.dedup.state': 'done' }],
  ]);
  expect(childrenOf(o, spans[2])).toEqual([['channel.webhook.verify', { 'channel.webhook.verified': false }]]);
});

test('a bad payload is rejected (400 payload), a throwing callback fails (500, ERROR on the push and its callback span)', async () => {
  o = otel();
  const url = await serve({
    onLogisticsUpdated: () => {
      throw new TypeError('database down for order SO20240601001');
    },
  });
  const body = '{"event":"logistics.updated","logistics":{"order_no":42}}';
  const bad = await fetch(url, { method: 'POST', body, headers: { 'x-channel-webhook-signature': await signWebhookBody(body, SECRET) } });
  expect(bad.status).toBe(400);
  expect((await sandbox.pushLogistics(sampleLogistics, { url })).status).toBe(500);
  const [rejected, failed] = push(o);
  expect(rejected.attributes).toEqual({ 'http.response.status_code': 400, 'channel.webhook.outcome': 'rejected', 'error.type': 'payload' });
  expect(failed.attributes).toEqual({
    'http.response.status_code': 500,
    'channel.webhook.outcome': 'failed',
    'error.type': 'callback',
    'channel.webhook.event': 'logistics.updated',
  });
  expect(failed.status.code).toBe(ERROR);
  const [callback] = o.named('channel.webhook.callback');
  expect([parentOf(callback), callback.status.code, callback.attributes['error.type']]).toEqual([failed.spanContext().spanId, ERROR, 'TypeError']);
  // The callback's message (with an order number) is nowhere.
  await expectNoSecrets(o, ['SO20240601001', 'database down']);
});

test("the callback's own spans are children of the callback span", async () => {
  o = otel();
  let inner: string | undefined;
  const url = await serve({
    onLogisticsUpdated: async () => {
      const span = o.tracer.startSpan('save');
      inner = span.spanContext().spanId;
      span.end();
    },
  });
  await sandbox.pushLogistics(sampleLogistics, { url });
  const [callback] = o.named('channel.webhook.callback');
  const [save] = o.named('save');
  expect(save.spanContext().spanId).toBe(inner);
  expect(parentOf(save)).toBe(callback.spanContext().spanId);
});

test('metrics: pushes by status and outcome, and their duration in seconds', async () => {
  o = otel();
  const url = await serve({ dedup: createMemoryDedupStore() });
  await sandbox.pushLogistics(sampleLogistics, { url });
  await sandbox.pushLogistics(sampleLogistics, { url });
  await sandbox.pushLogistics(sampleLogistics, { url, tamper: true });
  await fetch(url, { method: 'GET' });
  const points = await o.points();
  const pushes = points
    .filter((p) => p.name === 'channel.server.webhook.pushes')
    .map((p) => [p.attributes['http.response.status_code'], p.attributes['channel.webhook.outcome'], p.attributes['error.type'], p.value]);
  expect(pushes).toEqual([
    [200, 'processed', undefined, 1],
    [200, 'duplicate', undefined, 1],
    [401, 'rejected', 'signature', 1],
    [405, 'rejected', 'method', 1],
  ]);
  const durations = points.filter((p) => p.name === 'channel.server.webhook.duration');
  expect(durations.every((p) => p.unit === 's' && p.value === 1 && p.sum! < 30)).toBe(true);
  expect(points.find((p) => p.name === 'channel.server.webhook.pushes')?.unit).toBe('{push}');
});

test('nothing secret in any span or metric: the secret, the signature, the body, the order', async () => {
  o = otel();
  const seen: string[] = [];
  const url = await serve({ dedup: createMemoryDedupStore(), onLogisticsUpdated: (_event, context) => void seen.push(String(context.rawBody.length)) });
  await sandbox.pushLogistics(sampleLogistics, { url });
  await sandbox.pushLogistics(sampleLogistics, { url, tamper: true });
  const body = JSON.stringify({ event: 'logistics.updated', logistics: sampleLogistics });
  const signature = await signWebhookBody(body, SECRET);
  await fetch(url, { method: 'POST', body, headers: { 'x-channel-webhook-signature': signature } });
  expect(seen.length).toBeGreaterThan(0);
  await expectNoSecrets(o, [SECRET, signature, sampleLogistics.order_no, String(sampleLogistics.shipments[0].tracking_no)]);
});

test('a telemetry option of the wrong shape is a ConfigError', () => {
  const base = { secret: SECRET, onLogisticsUpdated: () => {} };
  expect(() => createWebhookHandler({ ...base, telemetry: { tracer: 'x' } } as never)).toThrow(ConfigError);
  expect(() => createWebhookHandler({ ...base, telemetry: { tracer: 'x' } } as never)).toThrow(
    /createWebhookHandler: telemetry must be \{ tracer, meter, propagate \}.*; got an object with tracer "x"/,
  );
  expect(() => createWebhookHandler({ ...base, telemetry: { metre: {} } } as never)).toThrow(/did you mean "meter"/);
  expect(() => createWebhookHandler({ ...base, telemetri: {} } as never)).toThrow(/did you mean "telemetry"/);
});
