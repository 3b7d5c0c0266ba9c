/**
 * The handler's side of an inbox with an inbox of the test's own (no Redis): what it is handed,
 * and the answer for each thing an append may do: store, find a duplicate, throw, hang.
 */
import { describe, expect, test } from 'vitest';
import { nodeCrypto } from '../../../../src/server/crypto/node.js';
import { webCrypto } from '../../../../src/server/crypto/web.js';
import { serverApi } from '../../../../src/server/api.js';
import { dedupKey, type InboxPush, type WebhookErrorInfo, type WebhookInbox } from '../../../../src/server-node.js';
import { bodyOf, snapshot, webhookSecret } from './inbox-helpers.js';

describe.each([
  ['node:crypto', serverApi(nodeCrypto)],
  ['Web Crypto', serverApi(webCrypto)],
] as const)('createWebhookHandler({ inbox }) (%s)', (_name, api) => {
  const setup = (append: WebhookInbox['append'], inboxTimeoutMs?: number, maxBufferedBytes?: number) => {
    const stages: Array<[string, WebhookErrorInfo]> = [];
    const handler = api.createWebhookHandler({
      secret: webhookSecret,
      inbox: { append },
      ...(inboxTimeoutMs ? { inboxTimeoutMs } : {}),
      ...(maxBufferedBytes ? { maxBufferedBytes, maxBodyBytes: maxBufferedBytes } : {}),
      onError: (error, info) => void stages.push([String((error as Error).message), info]),
    });
    const send = async (body: string) => {
      const response = await handler(
        new Request('http://partner.example.com/webhooks/channel', {
          method: 'POST',
          body,
          headers: { 'x-channel-webhook-signature': await api.signWebhookBody(body, webhookSecret) },
        }),
      );
      return { status: response.status, body: await response.json(), retryAfter: response.headers.get('retry-after') };
    };
    return { send, stages };
  };
  const body = bodyOf(snapshot('SO-intake', '2024-06-01T12:00:00+08:00'));

  test('the inbox is handed the verified push: dedupKey, the body as received, order, snapshot time; answered 202 once stored', async () => {
    const pushes: InboxPush[] = [];
    const { send } = setup(async (push) => void pushes.push(push));
    expect(await send(body)).toEqual({ status: 202, body: { ok: true, queued: true }, retryAfter: null });
    expect(pushes).toHaveLength(1);
    const [push] = pushes;
    expect(push).toMatchObject({
      key: await dedupKey(body),
      body,
      event: 'logistics.updated',
      orderNo: 'SO-intake',
      snapshotAt: Date.parse('2024-06-01T12:00:00+08:00'),
    });
    expect(new TextDecoder().decode(push.rawBody)).toBe(body);
    expect(Math.abs(push.receivedAt - Date.now())).toBeLessThan(10_000);
  });

  test("'duplicate' is answered 200 duplicate; a rejected append 503 with Retry-After, reported as inbox/error", async () => {
    expect(await setup(async () => 'duplicate').send(body)).toEqual({ status: 200, body: { ok: true, duplicate: true }, retryAfter: null });
    const failing = setup(async () => {
      throw new Error('READONLY You can not write against a read only replica');
    });
    expect(await failing.send(body)).toMatchObject({ status: 503, retryAfter: '5' });
    expect(failing.stages).toEqual([['READONLY You can not write against a read only replica', { stage: 'inbox', level: 'error', status: 503 }]]);
  });

  test('an append that never settles is answered 503 after inboxTimeoutMs, never 2xx', async () => {
    const hanging = setup(() => new Promise(() => {}), 50);
    expect((await hanging.send(body)).status).toBe(503);
    expect(hanging.stages[0][0]).toMatch(/did not store the push within inboxTimeoutMs \(50 ms\)/);
  });

  test('a body whose append outlives inboxTimeoutMs stays counted in maxBufferedBytes until the append settles: meanwhile a push that does not fit is refused 503 without reaching the inbox', async () => {
    const appends: Array<() => void> = [];
    const bytes = new TextEncoder().encode(body).byteLength;
    const held = setup(() => new Promise<void>((resolve) => appends.push(resolve)), 50, 2 * bytes + 10);
    expect((await held.send(body)).status).toBe(503);
    expect((await held.send(body)).status).toBe(503);
    // Two bodies held by appends still running: a third does not fit.
    expect((await held.send(body)).status).toBe(503);
    expect(appends).toHaveLength(2);
    expect(held.stages.at(-1)?.[0]).toMatch(/held by an inbox append Redis has not answered\) hold maxBufferedBytes/);
    appends.splice(0).forEach((settle) => settle());
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect((await held.send(body)).status).toBe(503);
    expect(appends).toHaveLength(1);
  });

  test('a forged push never reaches the inbox', async () => {
    const pushes: InboxPush[] = [];
    const { send } = setup(async (push) => void pushes.push(push));
    const response = await send(body);
    expect(response.status).toBe(202);
    const forged = await api.createWebhookHandler({ secret: webhookSecret, inbox: { append: async (p) => void pushes.push(p) }, onError: () => {} })(
      new Request('http://partner.example.com/webhooks/channel', { method: 'POST', body, headers: { 'x-channel-webhook-signature': 'ab'.repeat(32) } }),
    );
    expect(forged.status).toBe(401);
    expect(pushes).toHaveLength(1);
  });
});
