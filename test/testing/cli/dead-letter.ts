// Inbox states for doctor's tests: one dead letter (a push stored through the package's handler,
// whose callback then fails its one attempt), a push waiting with no worker, a worker running.
import { createHmac } from 'node:crypto';
import { createRedisInbox, createWebhookHandler, type RedisClient } from '../../../src/server-node.js';

/** Stores one push under `prefix` on `redis` through the package's handler; no worker takes it. */
export async function seedWaitingPush(redis: RedisClient, prefix: string, orderNo: string) {
  const inbox = createRedisInbox(redis, { prefix, maxAttempts: 1, pollMs: 10 });
  const secret = 'whsec_dead_letter_seed';
  const body = JSON.stringify({ event: 'logistics.updated', logistics: { order_no: orderNo, shipments: [] } });
  const signature = createHmac('sha256', secret).update(body).digest('hex');
  const stored = await createWebhookHandler({ secret, inbox })(
    new Request('http://partner.example.com/', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-channel-webhook-signature': signature },
      body,
    }),
  );
  if (stored.status !== 202) throw new Error('the push was not stored: HTTP ' + stored.status);
  return inbox;
}

/** Stores one push under `prefix` on `redis` and lets it fail until it is a dead letter. */
export async function seedDeadLetter(redis: RedisClient, prefix: string, orderNo: string): Promise<void> {
  const inbox = await seedWaitingPush(redis, prefix, orderNo);
  const worker = inbox.process({
    onError: () => {},
    onLogisticsUpdated: () => {
      throw new Error('the warehouse API answered 502');
    },
  });
  while ((await inbox.stats()).deadLetters < 1) await new Promise((resolve) => setTimeout(resolve, 20));
  await worker.close();
}

/** A worker on the inbox under `prefix` that does nothing with its pushes: stats() counts it. Resolves to its close(). */
export function runIdleWorker(redis: RedisClient, prefix: string): () => Promise<void> {
  const worker = createRedisInbox(redis, { prefix }).process({ onError: () => {}, onLogisticsUpdated: () => {} });
  return () => worker.close();
}
