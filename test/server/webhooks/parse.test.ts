import { describe, expect, test } from 'vitest';
import {
  compareLogistics,
  ConfigError,
  latestEventTime,
  parseWebhook,
  signWebhookBody,
  WebhookPayloadError,
  WebhookSignatureError,
} from '../../../src/server-node.js';
import type { Logistics } from '../../../src/server-node.js';
import { PROJECT_BODY } from '../implementations.js';

const secret = 'test_secret_123';
const signed = async (body: string) => ({ body, signature: await signWebhookBody(body, secret), secret });

describe('parseWebhook', () => {
  test('verified logistics.updated with Chinese text parses; unknown fields are kept', async () => {
    const body = PROJECT_BODY.replace('"order_no"', '"new_field":{"x":1},"order_no"');
    const event = await parseWebhook(await signed(body));
    expect(event.event).toBe('logistics.updated');
    if (event.event !== 'logistics.updated') throw new Error('narrowing');
    const logistics = (event as { logistics: Logistics }).logistics;
    expect(logistics.order_no).toBe('SO20240601001');
    expect(logistics.shipments[0].express_company).toBe('顺丰速运');
    expect((logistics as Record<string, unknown>).new_field).toEqual({ x: 1 });
  });

  test('shipment fields the interface does not mark required may be missing', async () => {
    const event = await parseWebhook(await signed('{"event":"logistics.updated","logistics":{"order_no":"A","shipments":[{}]}}'));
    expect(event).toEqual({ event: 'logistics.updated', logistics: { order_no: 'A', shipments: [{}] } });
  });

  test('another event type is returned as received, not rejected', async () => {
    const event = await parseWebhook(await signed('{"event":"order.cancelled","order":{"order_no":"A"}}'));
    expect(event).toEqual({ event: 'order.cancelled', order: { order_no: 'A' } });
  });

  test('the signature is found in Headers, IncomingHttpHeaders or a plain object, in any case', async () => {
    const { body, signature } = await signed(PROJECT_BODY);
    for (const headers of [
      new Headers({ 'X-Channel-Webhook-Signature': signature }),
      { 'x-channel-webhook-signature': signature },
      { 'X-CHANNEL-WEBHOOK-SIGNATURE': [signature] },
    ]) {
      await expect(parseWebhook({ body, headers, secret })).resolves.toMatchObject({ event: 'logistics.updated' });
    }
  });

  test('missing or wrong signature with a secret set -> WebhookSignatureError', async () => {
    await expect(parseWebhook({ body: PROJECT_BODY, secret })).rejects.toThrow(/no x-channel-webhook-signature header/);
    await expect(parseWebhook({ body: PROJECT_BODY, signature: 'ab'.repeat(32), secret })).rejects.toBeInstanceOf(WebhookSignatureError);
    const tampered = PROJECT_BODY.replace('SO2024', 'SO2025');
    await expect(parseWebhook({ body: tampered, signature: (await signed(PROJECT_BODY)).signature, secret })).rejects.toThrow(/does not match the body/);
  });

  test('an empty secret needs allowUnsigned: true', async () => {
    await expect(parseWebhook({ body: PROJECT_BODY, secret: '' })).rejects.toBeInstanceOf(ConfigError);
    await expect(parseWebhook({ body: PROJECT_BODY, secret: '', allowUnsigned: true })).resolves.toMatchObject({ event: 'logistics.updated' });
  });

  test.each([
    ['not JSON', '{"event":', /not UTF-8 JSON/],
    ['no event', '{"logistics":{}}', /event: expected string/],
    ['no order_no', '{"event":"logistics.updated","logistics":{"shipments":[]}}', /logistics\.order_no: expected string/],
    ['shipments not an array', '{"event":"logistics.updated","logistics":{"order_no":"A","shipments":{}}}', /logistics\.shipments: expected array/],
    [
      'a number where a string goes',
      '{"event":"logistics.updated","logistics":{"order_no":"A","shipments":[{"tracking_no":5}]}}',
      /logistics\.shipments\.0\.tracking_no: expected string/,
    ],
  ])('%s -> WebhookPayloadError naming the path', async (_label, body, message) => {
    const error = await parseWebhook(await signed(body)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WebhookPayloadError);
    expect((error as Error).message).toMatch(message);
  });

  test('invalid UTF-8 bytes are a payload error, not a crash', async () => {
    const bytes = new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]);
    const error = await parseWebhook({ body: bytes, signature: await signWebhookBody(bytes, secret), secret }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WebhookPayloadError);
  });
});

describe('snapshots', () => {
  const snap = (times: string[], shipped?: string): Logistics => ({
    order_no: 'A',
    shipments: [{ shipped_at: shipped, events: times.map((time) => ({ time })) }],
  });
  test('latestEventTime takes the newest event or shipped_at across shipments, across offsets', () => {
    expect(latestEventTime(snap(['2024-06-01T12:00:00+08:00', '2024-06-01T05:00:00Z'], '2024-06-01T10:00:00+08:00'))).toBe(Date.parse('2024-06-01T05:00:00Z'));
    expect(latestEventTime({ order_no: 'A', shipments: [] })).toBeUndefined();
  });
  test('compareLogistics tells the newer snapshot', () => {
    const older = snap(['2024-06-01T12:00:00+08:00']);
    const newer = snap(['2024-06-01T12:00:00+08:00', '2024-06-02T08:00:00+08:00']);
    expect(compareLogistics(newer, older)).toBe(1);
    expect(compareLogistics(older, newer)).toBe(-1);
    expect(compareLogistics(older, older)).toBe(0);
    expect(compareLogistics(older, { order_no: 'A', shipments: [] })).toBe(1);
  });
});
