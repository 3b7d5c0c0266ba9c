// What both client entries (index.ts, miniprogram.ts) export besides createClient; named one by one.
export type { Client } from './core/client.js';
export type { ClientEvents, RequestInfo } from './core/events.js';
export type {
  CoreClientOptions,
  MethodOptions,
  RequestOptions,
  RetryOptions,
  SearchParams,
  SignalLike,
  StoredToken,
  TokenProvider,
  TokenProviderContext,
  TokenReason,
  TokenStore,
  Transport,
  TransportRequest,
  TransportResponse,
} from './core/types.js';
export type { StandardSchemaV1 } from './core/standard-schema.js';
export { createCancelToken } from './core/cancel.js';
export type { CancelToken } from './core/cancel.js';
export {
  ChannelError,
  isChannelError,
  ConfigError,
  TokenProviderError,
  UnauthorizedError,
  HttpError,
  ApiError,
  ResponseError,
  NetworkError,
  TimeoutError,
  AbortError,
} from './errors/index.js';
export type { ChannelErrorCode, ErrorContext, SchemaIssue } from './errors/index.js';
