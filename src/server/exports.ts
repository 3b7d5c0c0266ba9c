// What both server entries export besides the crypto-bound functions; named one by one.
export { toNodeHandler } from './http/node-handler.js';
export type { FastifyReplyLike, FastifyRequestLike, KoaContextLike, NodeHandler, NodeRequest } from './http/node-handler.js';
export type { FetchContext, FetchRoute } from './http/route.js';
export { createTokenRoute } from './tokens/token-route.js';
export type { TokenRoute, TokenRouteErrorInfo, TokenRouteOptions, TokenSource } from './tokens/token-route.js';
export { createMemoryDedupStore } from './webhooks/dedup.js';
export type { DedupLease, DedupState, MemoryDedupStoreOptions, WebhookDedupStore } from './webhooks/dedup.js';
export { SIGNATURE_HEADER } from './webhooks/verify.js';
export type { RawBody, Secrets } from './webhooks/verify.js';
export type { TelemetryOptions } from '../shared/otel-api.js';
export { compareLogistics, latestEventTime, isLogisticsUpdated } from './webhooks/parse.js';
export type { ParseWebhookInput } from './webhooks/parse.js';
export type { HeadersLike } from './http/headers.js';
export type {
  WebhookContext,
  WebhookErrorInfo,
  WebhookHandler,
  WebhookHandlerOptions,
  WebhookInboxHandlerOptions,
  WebhookSecret,
} from './webhooks/handler-options.js';
export type { RedisInbox } from './webhooks/inbox/redis-inbox.js';
export type { RedisInboxOptions } from './webhooks/inbox/inbox-options.js';
export type {
  DeadLetter,
  InboxAppendResult,
  InboxContext,
  InboxErrorInfo,
  InboxProcessOptions,
  InboxPush,
  InboxStats,
  InboxWorker,
  WebhookInbox,
} from './webhooks/inbox/inbox-types.js';
// TOKEN_PATH stays inside: the exchange and the sandbox know the path, a partner never needs it.
export { MAX_EXTERNAL_USER_ID } from './tokens/exchange-options.js';
export type { TokenExchange, TokenExchangeOptions } from './tokens/exchange-options.js';
export { createMemoryTokenCache, type MemoryTokenCacheOptions } from './tokens/token-cache.js';
export type { ExchangedToken, CachedToken, TokenCache, TokenCacheErrorInfo, TokenCacheLock } from './tokens/token-cache.js';
// createRedisTokenCache and createRedisInbox are bound to the entry's crypto (server/api.ts).
export { createRedisDedupStore } from './redis.js';
export type { IoRedisClient, NodeRedisClient, RedisClient, RedisDedupStoreOptions, RedisTokenCacheOptions } from './redis.js';
export type { SignFunction, SignInput } from './tokens/signing.js';
export type { Secret } from './crypto/crypto.js';
// The zod schemas the handler explains a bad body with are not exported: undocumented, and their
// types would pull zod-mini's internal declarations into the shipped .d.ts; isLogisticsUpdated()
// and parseWebhook() are the public checks.
export type { Logistics, LogisticsUpdatedEvent, Shipment, TrackingEvent, UnknownWebhookEvent, WebhookEvent } from '../schemas/logistics.js';
export { ChannelError, isChannelError, ConfigError, TokenExchangeError, WebhookPayloadError, WebhookSignatureError } from '../errors/index.js';
export type { ChannelErrorCode } from '../errors/index.js';
