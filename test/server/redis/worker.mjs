// One backend instance, as a child process: its own token exchange over its own Redis client
// (the built package, imported by name). Used by multi-process.test.ts and test/bench/token-cache.mjs.
// argv[2]: JSON { client, redisUrl, baseUrl, accessKey, secretKey, latencyMs?, timeout?, prefix?, lock? }.
// IPC: sends { type: 'ready' }; on { type: 'run', users, concurrency } fires concurrency
// getToken calls per user at once and answers { type: 'result', ... }; on { type: 'exit' } quits.
import { performance } from 'node:perf_hooks';
import { createRedisTokenCache, createTokenExchange } from 'channel-sdk/server';

const config = JSON.parse(process.argv[2]);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function connect(name, url) {
  if (name.startsWith('ioredis')) {
    const { Redis } = await import(name);
    const client = new Redis(url);
    client.on('error', () => {}); // the bench stops Redis on purpose
    await new Promise((resolve) => client.once('ready', resolve));
    return { client, close: async () => client.disconnect() };
  }
  const { createClient } = await import(name);
  const client = createClient({ url });
  client.on('error', () => {});
  await client.connect();
  return { client, close: async () => (typeof client.destroy === 'function' ? client.destroy() : client.disconnect()) };
}

const redis = await connect(config.client, config.redisUrl);
const cacheErrors = [];
const redisCache = createRedisTokenCache(redis.client, config.prefix ? { prefix: config.prefix } : {});
// lock: false is the cache a user writes from the option table (get and set only), for comparison.
const cache = config.lock === false ? { get: redisCache.get, set: redisCache.set } : redisCache;
const exchange = createTokenExchange({
  baseUrl: config.baseUrl,
  accessKey: config.accessKey,
  secretKey: config.secretKey,
  timeout: config.timeout ?? 10000,
  cache,
  onCacheError: (info) => cacheErrors.push(info),
  // Latency added on the way to the service, for a sandbox that answers at once.
  ...(config.latencyMs ? { fetch: async (input, init) => (await sleep(config.latencyMs), fetch(input, init)) } : {}),
});

async function run({ users, concurrency }) {
  const tokens = {};
  const errors = [];
  let maxLatencyMs = 0;
  await Promise.all(
    users.flatMap((user) =>
      Array.from({ length: concurrency }, async () => {
        const started = performance.now();
        try {
          const token = await exchange.getToken(user);
          (tokens[user] ??= []).push(token.accessToken);
        } catch (error) {
          errors.push(String(error?.message ?? error));
        }
        maxLatencyMs = Math.max(maxLatencyMs, performance.now() - started);
      }),
    ),
  );
  const distinct = Object.fromEntries(Object.entries(tokens).map(([user, list]) => [user, [...new Set(list)]]));
  return { type: 'result', distinct, errors, maxLatencyMs, cacheErrors: cacheErrors.splice(0) };
}

process.on('message', async (message) => {
  if (message.type === 'run') process.send(await run(message));
  if (message.type === 'exit') {
    await redis.close();
    process.disconnect();
  }
});
process.send({ type: 'ready' });
