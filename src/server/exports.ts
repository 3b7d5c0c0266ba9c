// What both server entries export besides the crypto-bound functions; named one by one.
export { toNodeHandler } from './node-handler.js';
export type { FastifyReplyLike, FastifyRequestLike, KoaContextLike, NodeHandler, NodeRequest } from './node-handler.js';
export type { FetchContext, FetchRoute } from './route.js';
export { createTokenRoute } from './token-route.js';
export type { TokenRoute, TokenRouteErrorInfo, TokenRouteOptions, TokenSource } from './token-route.js';
export { createMemoryDedupStore } from './dedup.js';
export type { DedupLease, DedupState, MemoryDedupStoreOptions, WebhookDedupStore } from './dedup.js';
export { compareLogistics, latestEventTime, isLogisticsUpdated, SIGNATURE_HEADER } from './webhook.js';
export type { ParseWebhookInput, RawBody } from './webhook.js';
export type { HeadersLike } from './headers.js';
export type { WebhookContext, WebhookErrorInfo, WebhookHandler, WebhookHandlerOptions, WebhookSecret } from './handler.js';
export { MAX_EXTERNAL_USER_ID, TOKEN_PATH } from './token-exchange.js';
export type { TokenExchange, TokenExchangeOptions } from './token-exchange.js';
export { createMemoryTokenCache } from './token-cache.js';
export type { ExchangedToken, StoredToken, TokenCache, TokenCacheErrorInfo, TokenCacheLock } from './token-cache.js';
export { createRedisDedupStore, createRedisTokenCache } from './redis.js';
export type { IoRedisClient, NodeRedisClient, RedisClient, RedisDedupStoreOptions, RedisTokenCacheOptions } from './redis.js';
export type { SignFunction, SignInput } from './signing.js';
export type { Secret } from './crypto.js';
export {
  logisticsSchema,
  logisticsUpdatedSchema,
  shipmentSchema,
  trackingEventSchema,
  tokenResponseSchema,
} from '../schemas/logistics.js';
export type { Logistics, LogisticsUpdatedEvent, Shipment, TrackingEvent, UnknownWebhookEvent, WebhookEvent } from '../schemas/logistics.js';
export {
  ChannelError,
  isChannelError,
  ConfigError,
  TokenExchangeError,
  WebhookPayloadError,
  WebhookSignatureError,
} from '../errors/index.js';
export type { ChannelErrorCode } from '../errors/index.js';
