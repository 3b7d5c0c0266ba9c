// Internal barrel for the errors layer; the entries name their exports one by one.
export { ChannelError, isChannelError } from './ChannelError.js';
export type { ChannelErrorCode, ErrorContext } from './ChannelError.js';
export { ConfigError } from './ConfigError.js';
export { TokenProviderError } from './TokenProviderError.js';
export { UnauthorizedError } from './UnauthorizedError.js';
export { HttpError } from './HttpError.js';
export { ApiError } from './ApiError.js';
export { ResponseError } from './ResponseError.js';
export type { SchemaIssue } from './ResponseError.js';
export { NetworkError } from './NetworkError.js';
export { TimeoutError } from './TimeoutError.js';
export { AbortError } from './AbortError.js';
export { WebhookSignatureError } from './WebhookSignatureError.js';
export { WebhookPayloadError } from './WebhookPayloadError.js';
export { TokenExchangeError } from './TokenExchangeError.js';
