/**
 * A user's tracer or meter that breaks costs the server nothing (issue #43 item 3): the webhook
 * handler answers every push as it would without telemetry, the exchange issues its token and
 * the token route answers 200, nothing rejects unhandled. The inbox workers: redis-telemetry.integration.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createMemoryDedupStore, createTokenExchange, createTokenRoute, createWebhookHandler, type WebhookInbox } from '../../../src/server-node.js';
import { startSandbox, type Sandbox } from '../../../src/testing.js';
import { bodyOf, post, snapshot, webhookSecret } from '../webhooks/inbox/inbox-helpers.js';
import { brokenTelemetries, unhandledDuring } from './broken.js';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => {
  await sandbox?.close();
});

describe.each(brokenTelemetries())('%s', (_what, telemetry) => {
  test('the webhook handler answers every push as without telemetry: processed 200, repeat 200 duplicate, failing callback 500, forged 401; with an inbox 202', async () => {
    const runs: string[] = [];
    const unhandled = await unhandledDuring(async () => {
      const handler = createWebhookHandler({
        secret: webhookSecret,
        dedup: createMemoryDedupStore(),
        telemetry,
        onError: () => {},
        onLogisticsUpdated: ({ logistics }) => {
          if (logistics.order_no === 'SO-fails') throw new Error('database down');
          runs.push(logistics.order_no);
        },
      });
      const body = bodyOf(snapshot('SO-broken', '2024-06-01T12:00:00+08:00'));
      expect(await post(handler, body)).toEqual({ status: 200, body: { ok: true } });
      expect(await post(handler, body)).toEqual({ status: 200, body: { ok: true, duplicate: true } });
      expect((await post(handler, bodyOf(snapshot('SO-fails', '2024-06-01T12:00:00+08:00')))).status).toBe(500);
      expect((await post(handler, body, 'whsec_forged')).status).toBe(401);
      const stored: string[] = [];
      const inbox: WebhookInbox = { append: async (push) => void stored.push(push.orderNo!) };
      const queued = createWebhookHandler({ secret: webhookSecret, inbox, telemetry, onError: () => {} });
      expect(await post(queued, body)).toEqual({ status: 202, body: { ok: true, queued: true } });
      expect(stored).toEqual(['SO-broken']);
    });
    expect(runs).toEqual(['SO-broken']);
    expect(unhandled).toEqual([]);
  });

  test('the exchange issues its token (a miss, a hit, a forced refresh) and the token route answers 200', async () => {
    const unhandled = await unhandledDuring(async () => {
      const exchange = createTokenExchange({ baseUrl: sandbox.url, ...sandbox.credentials, telemetry });
      const first = await exchange.getToken('user-1');
      expect((await exchange.getToken('user-1')).accessToken).toBe(first.accessToken);
      expect((await exchange.getToken('user-1', { forceRefresh: true })).accessToken).not.toBe(first.accessToken);
      const route = createTokenRoute({ exchange, resolveUser: () => 'user-2' });
      const answer = await route(new Request('http://partner.example.com/channel-token'));
      expect(answer.status).toBe(200);
      expect(await answer.json()).toMatchObject({ token_type: 'Bearer', access_token: expect.any(String) });
    });
    expect(unhandled).toEqual([]);
  });
});
