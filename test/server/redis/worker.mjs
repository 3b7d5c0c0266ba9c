// One backend instance, as a child process: its own token exchange over its own Redis client
// (the built package, imported by name). Used by multi-process.integration.test.ts, test/cluster/ and
// test/bench/token-cache.mjs.
// argv[2]: JSON InstanceConfig (instances.d.mts): a single node (redisUrl) or a Redis Cluster
// (clusterNodes), and optionally an HTTP server with the token route (route) and a webhook
// handler on the Redis dedup store (webhookSecret).
// IPC: sends { type: 'ready', port? }; on { type: 'run', users, concurrency } fires concurrency
// getToken calls per user at once and answers { type: 'result', ... }; on { type: 'stream', ... }
// calls getToken at a steady pace and answers every call's start and latency; on
// { type: 'report' } answers the webhook callbacks run so far; on { type: 'exit' } quits.
import { createServer } from 'node:http';
import { performance } from 'node:perf_hooks';
import { connect } from './connect.mjs';
import { createRedisDedupStore, createRedisTokenCache, createTokenExchange, createTokenRoute, createWebhookHandler, toNodeHandler } from 'channel-sdk/server';

const config = JSON.parse(process.argv[2]);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const ignore = () => {}; // the tests and the bench stop Redis on purpose

const redis = await connect(config.client, config.redisUrl, config.clusterNodes, config.cold);
const cacheErrors = [];
const redisCache = createRedisTokenCache(redis.client, config.prefix ? { prefix: config.prefix } : {});
// lock: false is the cache a user writes from the option table (get and set only), for comparison.
const cache = config.lock === false ? { get: redisCache.get, set: redisCache.set } : redisCache;
const exchange = createTokenExchange({
  baseUrl: config.baseUrl,
  accessKey: config.accessKey,
  secretKey: config.secretKey,
  ...(config.timeout ? { timeout: config.timeout } : {}),
  cache,
  onCacheError: (info) => cacheErrors.push(info),
  // Latency added on the way to the service, for a sandbox that answers at once.
  ...(config.latencyMs ? { fetch: async (input, init) => (await sleep(config.latencyMs), fetch(input, init)) } : {}),
  // Options of newer releases (the bench runs the same worker against older builds without them).
  ...config.exchangeOptions,
});

let callbacks = 0;
let port;
if (config.route || config.webhookSecret) {
  const tokenRoute = config.route ? toNodeHandler(createTokenRoute({ exchange, resolveUser: (req) => req.headers['x-user'], onError: ignore })) : undefined;
  const webhook = config.webhookSecret
    ? toNodeHandler(
        createWebhookHandler({
          secret: config.webhookSecret,
          dedup: createRedisDedupStore(redis.client, { prefix: (config.prefix ?? '') + 'hooks:' }),
          onError: ignore,
          onLogisticsUpdated: async () => {
            callbacks++;
            await sleep(config.callbackMs ?? 50);
          },
        }),
      )
    : undefined;
  const server = createServer((req, res) => {
    if (tokenRoute && req.url.startsWith('/channel-token')) return tokenRoute(req, res);
    if (webhook && req.url === '/webhooks/channel') return webhook(req, res);
    res.writeHead(404).end();
  });
  server.keepAliveTimeout = 60_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = server.address().port;
}

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

/**
 * Every `intervalMs` for `durationMs`, three getToken calls: a user never seen before, a user of
 * `warm` (cached earlier), and a forced refresh of another user of `warm`.
 */
async function stream({ warm, durationMs, intervalMs }) {
  const calls = [];
  const errors = [];
  const pending = [];
  const end = performance.now() + durationMs;
  for (let n = 0; performance.now() < end; n++) {
    const kinds = [
      ['new', `new-${process.pid}-${n}`, false],
      ['cached', warm[n % warm.length], false],
      ['forced', warm[(n + 1) % warm.length], true],
    ];
    for (const [kind, user, forceRefresh] of kinds) {
      const at = Date.now();
      const started = performance.now();
      pending.push(
        exchange.getToken(user, { forceRefresh }).then(
          () => calls.push({ kind, at, ms: performance.now() - started }),
          (error) => errors.push(String(error?.message ?? error)),
        ),
      );
    }
    await sleep(intervalMs);
  }
  await Promise.all(pending);
  return { type: 'streamed', calls, errors, cacheErrors: cacheErrors.splice(0) };
}

process.on('message', async (message) => {
  if (message.type === 'run') process.send(await run(message));
  if (message.type === 'stream') process.send(await stream(message));
  if (message.type === 'report') process.send({ type: 'report', callbacks, cacheErrors: cacheErrors.splice(0) });
  if (message.type === 'exit') {
    await redis.close();
    process.exit(0);
  }
});
process.send({ type: 'ready', port });
