// Slow callbacks, many instances: pushes stored in Redis and answered at once, processed by workers.
import { createRedisInbox, createWebhookHandler, type Logistics } from 'channel-sdk/server';
import { Redis } from 'ioredis'; // node-redis works too: createClient({ url }), then await client.connect()

export const redis = new Redis(process.env.REDIS_URL!); // appendonly yes on that Redis: what it forgets is lost
redis.on('error', (error) => console.error('[redis]', error.message)); // ioredis reconnects by itself

export const inbox = createRedisInbox(redis, { prefix: 'myapp:' });

// The route (every instance): verifies, stores, answers 202 at once; 503 while Redis cannot store it.
export const webhook = createWebhookHandler({ secret: () => process.env.CHANNEL_WEBHOOK_SECRET, inbox });

// The workers (as many processes as you like): each push at least once, one at a time per order,
// never after a newer snapshot of its order; retried with backoff, a dead letter after 10 attempts.
export function startWorker(save: (logistics: Logistics) => Promise<void>) {
  const worker = inbox.process({ concurrency: 4, onLogisticsUpdated: ({ logistics }) => save(logistics) });
  process.once('SIGTERM', async () => {
    await worker.close(); // takes nothing new, finishes what runs and stores its outcome
    await redis.quit();
    process.exit(0);
  });
  return worker;
}
