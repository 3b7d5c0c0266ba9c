/**
 * Webhook secret rotation (issue #33 item 3): `secret` may be a list, `[current, previous]`; a
 * push signed with any of them is accepted, on verifyWebhookSignature, parseWebhook and the
 * handler (source and built package, node:crypto and Web Crypto). The inbox path is covered in
 * test/server/webhooks/inbox/redis-inbox.integration.test.ts ("forged, unsigned, oversized…").
 */
import { describe, expect, test } from 'vitest';
import { nodeCrypto } from '../../../src/server/crypto/node.js';
import { webCrypto } from '../../../src/server/crypto/web.js';
import { serverApi } from '../../../src/server/api.js';
import { ConfigError } from '../../../src/server-node.js';
import { implementations, PROJECT_BODY } from '../implementations.js';

const current = 'whsec_current';
const previous = new TextEncoder().encode('whsec_previous'); // bytes work in a list too
const other = 'whsec_someone_else';
const impls = await implementations();

describe.each(impls)('secret rotation: %s', (_name, tools) => {
  test('verifyWebhookSignature accepts a push signed with the current or the previous secret, not another', async () => {
    const byCurrent = await tools.signWebhookBody(PROJECT_BODY, current);
    const byPrevious = await tools.signWebhookBody(PROJECT_BODY, previous);
    const byOther = await tools.signWebhookBody(PROJECT_BODY, other);
    expect(await tools.verifyWebhookSignature(PROJECT_BODY, byCurrent, [current, previous])).toBe(true);
    expect(await tools.verifyWebhookSignature(PROJECT_BODY, byPrevious.toUpperCase(), [current, previous])).toBe(true);
    expect(await tools.verifyWebhookSignature(PROJECT_BODY, byOther, [current, previous])).toBe(false);
    expect(await tools.verifyWebhookSignature(PROJECT_BODY + ' ', byCurrent, [current, previous])).toBe(false);
  });

  test('a malformed list is false, never a throw', async () => {
    const hex = await tools.signWebhookBody(PROJECT_BODY, current);
    for (const list of [[], [current, ''], [current, null], [current, 7], [new Uint8Array(0)]] as unknown[]) {
      await expect(tools.verifyWebhookSignature(PROJECT_BODY, hex, list as string[])).resolves.toBe(false);
    }
  });

  test('parseWebhook takes the list; an empty list is a ConfigError, not an unsigned pass', async () => {
    const signature = await tools.signWebhookBody(PROJECT_BODY, previous);
    const event = await tools.parseWebhook({ body: PROJECT_BODY, signature, secret: [current, previous] });
    expect(event.event).toBe('logistics.updated');
    await expect(tools.parseWebhook({ body: PROJECT_BODY, signature, secret: [current, other] })).rejects.toMatchObject({ name: 'WebhookSignatureError' });
    await expect(tools.parseWebhook({ body: PROJECT_BODY, signature, secret: [], allowUnsigned: true })).rejects.toThrow(/secret is an empty list/);
    await expect(tools.parseWebhook({ body: PROJECT_BODY, signature, secret: [current, ''] })).rejects.toThrow(/secret\[1\] is empty/);
  });
});

describe.each([
  ['node:crypto', serverApi(nodeCrypto)],
  ['Web Crypto', serverApi(webCrypto)],
] as const)('createWebhookHandler with [current, previous] (%s)', (_name, api) => {
  const post = async (handler: (request: Request) => Promise<Response>, key: string | Uint8Array) =>
    (
      await handler(
        new Request('http://partner.example.com/webhooks/channel', {
          method: 'POST',
          body: PROJECT_BODY,
          headers: { 'x-channel-webhook-signature': await api.signWebhookBody(PROJECT_BODY, key) },
        }),
      )
    ).status;

  test('pushes signed with either secret are processed; another secret gets 401', async () => {
    const received: string[] = [];
    for (const secret of [[current, previous], () => [current, previous], async () => [previous, current]] as const) {
      const handler = api.createWebhookHandler({ secret, onError: () => {}, onLogisticsUpdated: (e) => void received.push(e.logistics.order_no) });
      expect([await post(handler, current), await post(handler, previous), await post(handler, other)]).toEqual([200, 200, 401]);
    }
    expect(received).toHaveLength(6);
  });

  test('a list with an empty or non-string secret is a ConfigError at creation, saying which', () => {
    const create = (secret: unknown) => () => api.createWebhookHandler({ secret: secret as string, onLogisticsUpdated: () => {} });
    expect(create([])).toThrow(ConfigError);
    expect(create([])).toThrow(/secret is an empty list/);
    expect(create([current, ''])).toThrow(/secret\[1\] is empty/);
    expect(create([current, 42])).toThrow(/secret\[1\] is not a string or bytes \(42\)/);
    // allowUnsigned does not turn a broken list into "unsigned accepted".
    expect(() => api.createWebhookHandler({ secret: [] as unknown as string, allowUnsigned: true, onLogisticsUpdated: () => {} })).toThrow(ConfigError);
  });

  test('a secret function that returns a broken list refuses the push (500), never accepts it unsigned', async () => {
    const errors: unknown[] = [];
    const handler = api.createWebhookHandler({ secret: () => [current, ''], onError: (e) => void errors.push(e), onLogisticsUpdated: () => {} });
    expect(await post(handler, current)).toBe(500);
    expect(String(errors[0])).toMatch(/secret\[1\] is empty/);
    expect(String(errors[0])).not.toContain(current);
  });
});
