// Your own queue instead of Redis Streams: the webhook handler appends each verified push to BullMQ.
import { compareLogistics, createWebhookHandler, type Logistics, type WebhookInbox } from 'channel-sdk/server';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';

export const connection = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null }); // as BullMQ asks
export const queue = new Queue('channel-pushes', { connection });

export const inbox: WebhookInbox = {
  // jobId is the push's dedupKey: BullMQ keeps one job per id, so a repeated push is stored once.
  append: async (push) => {
    await queue.add(
      push.event,
      { body: push.body },
      { jobId: push.key, attempts: 10, backoff: { type: 'exponential', delay: 1000 }, removeOnComplete: { age: 86_400 }, removeOnFail: false },
    );
  },
};

export const webhook = createWebhookHandler({ secret: () => process.env.CHANNEL_WEBHOOK_SECRET, inbox });

// BullMQ runs jobs of one order side by side: keep the newer snapshot (get + put in one transaction).
export interface Store {
  get(orderNo: string): Promise<Logistics | undefined>;
  put(logistics: Logistics): Promise<void>;
}

export function startWorker(store: Store, options: { lockDuration?: number; stalledInterval?: number } = {}) {
  return new Worker(
    'channel-pushes',
    async (job) => {
      const event = JSON.parse(job.data.body);
      if (event.event !== 'logistics.updated') return;
      const stored = await store.get(event.logistics.order_no);
      if (!stored || compareLogistics(event.logistics, stored) >= 0) await store.put(event.logistics);
    },
    { connection, concurrency: 4, ...options },
  );
}
