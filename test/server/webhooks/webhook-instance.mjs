// One backend instance for test/server/webhooks/webhook-instances.integration.test.ts: the built package's webhook
// handler on node:http with the Redis dedup store over its own ioredis client. It tells the parent
// over IPC when a callback starts (so the parent can SIGKILL it mid-callback), and reports its
// callbacks and each onError stage/status on request.
import { createServer } from 'node:http';
import { createRedisDedupStore, createWebhookHandler, toNodeHandler } from 'channel-sdk/server';
import { Redis } from 'ioredis';

const [redisUrl, secret, prefix, leaseMs] = process.argv.slice(2);
const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
redis.on('error', () => {}); // the tests stop and freeze Redis on purpose
// hang: the callback never ends (the parent kills this process); delayMs then fail: it throws.
const state = { fail: false, hang: false, delayMs: 0, calls: 0, processed: 0, stages: [] };

const handler = createWebhookHandler({
  secret,
  dedup: createRedisDedupStore(redis, { prefix, ttlSeconds: 600 }),
  dedupTimeoutMs: 300,
  dedupLeaseMs: Number(leaseMs),
  onError: (_error, info) => void state.stages.push(info.stage + (info.status ? '/' + info.status : '')),
  onLogisticsUpdated: async ({ logistics }) => {
    state.calls++;
    process.send({ type: 'started', order: logistics.order_no });
    if (state.hang) return new Promise(() => {});
    await new Promise((resolve) => setTimeout(resolve, state.delayMs));
    if (state.fail) {
      state.fail = false;
      throw new Error('database down');
    }
    state.processed++;
  },
});

const server = createServer(toNodeHandler(handler));
server.listen(0, '127.0.0.1', () => process.send({ type: 'ready', port: server.address().port }));
process.on('message', (message) => {
  if (message.set) Object.assign(state, message.set);
  if (message.report) {
    process.send({ type: 'report', calls: state.calls, processed: state.processed, stages: state.stages, redis: redis.status });
    state.calls = 0;
    state.processed = 0;
    state.stages = [];
  }
  if (message.close) {
    redis.disconnect();
    server.closeAllConnections();
    server.close(() => process.exit(0));
  }
});
