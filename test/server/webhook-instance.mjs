// One backend instance for test/server/webhook-instances.test.ts: the built package's webhook
// handler on node:http with the Redis dedup store over its own ioredis client. It reports each
// callback and each onError stage to the parent over IPC, in order.
import { createServer } from 'node:http';
import { createRedisDedupStore, createWebhookHandler, toNodeHandler } from 'channel-sdk/server';
import { Redis } from 'ioredis';

const [redisUrl, secret, prefix] = process.argv.slice(2);
const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
redis.on('error', () => {}); // the test stops Redis on purpose
const state = { fail: false, delayMs: 0, calls: 0, stages: [] };

const handler = createWebhookHandler({
  secret,
  dedup: createRedisDedupStore(redis, { prefix, ttlSeconds: 600 }),
  dedupTimeoutMs: 300,
  onError: (_error, info) => void state.stages.push(info.stage),
  onLogisticsUpdated: async () => {
    state.calls++;
    await new Promise((resolve) => setTimeout(resolve, state.delayMs));
    if (state.fail) {
      state.fail = false;
      throw new Error('database down');
    }
  },
});

const server = createServer(toNodeHandler(handler));
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('message', (message) => {
  if (message.set) Object.assign(state, message.set);
  if (message.report) {
    process.send({ calls: state.calls, stages: state.stages });
    state.calls = 0;
    state.stages = [];
  }
  if (message.close) {
    redis.disconnect();
    server.close(() => process.exit(0));
  }
});
