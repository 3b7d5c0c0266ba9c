// Several instances of your backend, one token-endpoint call per user: the token cache on your Redis.
import { createRedisTokenCache, createTokenExchange } from 'channel-sdk/server';
import { Redis } from 'ioredis'; // node-redis works too: createClient({ url }), then await client.connect()

export const redis = new Redis(process.env.REDIS_URL!);
redis.on('error', (error) => console.error('[redis]', error.message)); // ioredis reconnects by itself

export const exchange = createTokenExchange({
  baseUrl: process.env.CHANNEL_BASE_URL!,
  accessKey: process.env.CHANNEL_ACCESS_KEY!,
  secretKey: process.env.CHANNEL_SECRET_KEY!,
  cache: createRedisTokenCache(redis, { prefix: 'myapp:channel:' }),
  // While Redis is unreachable, tokens come straight from the service: say so in your logs.
  onCacheError: ({ operation, message }) => console.warn(`[channel] token cache ${operation} failed: ${message}`),
});
