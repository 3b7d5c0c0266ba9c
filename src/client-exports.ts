// What both client entries (index.ts, miniprogram.ts) export besides createClient; named one by one.
// Each entry exports its own `Client` (its file calls differ); what they share:
export type { BaseClient } from './core/client.js';
export type { ClientEvents, RequestInfo } from './core/events.js';
export type {
  CoreClientOptions,
  FileCallOptions,
  HeadersInput,
  MethodOptions,
  OfflineOptions,
  Progress,
  RequestOptions,
  RetryBudgetOptions,
  RetryOptions,
  SearchParams,
  SignalLike,
  StoredToken,
  TokenProvider,
  TokenProviderContext,
  TokenReason,
  TokenStore,
  UploadFields,
} from './core/types.js';
// Not exported: the transport seam (Transport, TransportRequest, TransportResponse, UploadSpec,
// DownloadSpec, FileSpec, BlobLike). No option accepts a transport; it is the core's own interface.
export type { StandardSchemaV1 } from './core/standard-schema.js';
export { createCancelToken } from './core/cancel.js';
export { isRetryable } from './core/requests/is-retryable.js';
export type { BeforeSend, SendAttempt } from './core/requests/send-attempt.js';
export type { TelemetryOptions } from './shared/otel-api.js';
export type { ClientTelemetryPlugin } from './core/telemetry-hooks.js';
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
