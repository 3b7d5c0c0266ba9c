// The server functions that need a crypto, over one implementation: src/server.ts passes Web
// Crypto, src/server-node.ts node:crypto, the tests both. Each is a one-line call into its room.
import type { WebhookEvent } from '../schemas/logistics.js';
import type { Crypto, Secret } from './crypto/crypto.js';
import type { TokenExchange, TokenExchangeOptions } from './tokens/exchange-options.js';
import { createExchange } from './tokens/exchange.js';
import { signReference, type SignInput } from './tokens/signing.js';
import type { WebhookHandler, WebhookHandlerOptions, WebhookInboxHandlerOptions } from './webhooks/handler-options.js';
import { createHandler } from './webhooks/handler.js';
import { parseWith, type ParseWebhookInput } from './webhooks/parse.js';
import { bodyKey, signBody, verifySignature, type RawBody, type Secrets } from './webhooks/verify.js';
import { redisTokenCache, type RedisClient, type RedisTokenCacheOptions } from './redis.js';
import { redisInbox, type RedisInbox } from './webhooks/inbox/redis-inbox.js';
import type { RedisInboxOptions } from './webhooks/inbox/inbox-options.js';
import type { TokenCache } from './tokens/token-cache.js';

export function serverApi(crypto: Crypto) {
  const referenceSign = (input: SignInput): Promise<Record<string, string>> => signReference(crypto, input);
  return {
    verifyWebhookSignature: (rawBody: RawBody, signature: string | null | undefined, secret: Secrets): Promise<boolean> =>
      verifySignature(crypto, rawBody, signature, secret),
    signWebhookBody: (rawBody: RawBody, secret: Secret): Promise<string> => signBody(crypto, rawBody, secret),
    parseWebhook: (input: ParseWebhookInput): Promise<WebhookEvent> => parseWith(crypto, input),
    dedupKey: (rawBody: RawBody): Promise<string> => bodyKey(crypto, rawBody),
    createWebhookHandler: (options: WebhookHandlerOptions | WebhookInboxHandlerOptions): WebhookHandler => createHandler(crypto, options),
    createTokenExchange: (options: TokenExchangeOptions): TokenExchange => createExchange(referenceSign, options),
    createRedisTokenCache: (redis: RedisClient, options?: RedisTokenCacheOptions): TokenCache & Required<Pick<TokenCache, 'lock' | 'connecting'>> =>
      redisTokenCache(crypto, redis, options),
    createRedisInbox: (redis: RedisClient, options?: RedisInboxOptions): RedisInbox => redisInbox(crypto, redis, options),
    referenceSign,
  };
}
