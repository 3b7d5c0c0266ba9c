/** Every error code the SDK can produce; stable across releases. */
export type ChannelErrorCode =
  | 'CONFIG_ERROR'
  | 'TOKEN_PROVIDER_ERROR'
  | 'UNAUTHORIZED'
  | 'HTTP_ERROR'
  | 'API_ERROR'
  | 'RESPONSE_ERROR'
  | 'NETWORK_ERROR'
  | 'TIMEOUT'
  | 'ABORTED'
  | 'WEBHOOK_SIGNATURE_ERROR'
  | 'WEBHOOK_PAYLOAD_ERROR'
  | 'TOKEN_EXCHANGE_ERROR';

/** Context attached to an error. Never holds a token or a secret. */
export interface ErrorContext {
  /** Upper-case HTTP method of the request that failed. */
  method?: string;
  /** Full URL of the request that failed (the token is sent in a header, never in the URL). */
  url?: string;
  /** The underlying error, when there is one. */
  cause?: unknown;
}

// A registry symbol is shared by every realm of one agent (iframes, vm contexts), so the
// brand survives where `instanceof` does not.
const brand = Symbol.for('channel-sdk.error');

/**
 * Base class of every error thrown by channel-sdk. Check with {@link isChannelError}
 * (works across realms) or `instanceof`, then branch on the stable `code`.
 */
export class ChannelError extends Error {
  override readonly name: string = 'ChannelError';
  /** Stable machine-readable code; switch on this rather than on `message`. */
  readonly code: ChannelErrorCode = 'CONFIG_ERROR';
  /** Upper-case HTTP method, when the error belongs to a request. */
  readonly method?: string;
  /** Request URL, when the error belongs to a request. */
  readonly url?: string;

  constructor(message: string, context: ErrorContext = {}) {
    super('[channel-sdk] ' + message);
    // Set by hand: the `cause` constructor option is ES2022 and mini-program hosts lack it.
    if (context.cause !== undefined) (this as { cause?: unknown }).cause = context.cause;
    if (context.method) this.method = context.method;
    if (context.url) this.url = context.url;
  }
}
Object.defineProperty(ChannelError.prototype, brand, { value: true });

/**
 * True for any error thrown by channel-sdk, even one created in another realm
 * (an iframe, a `node:vm` context, a mini-program plugin).
 * @example
 * if (isChannelError(e) && e.code === 'UNAUTHORIZED') redirectToLogin();
 */
export function isChannelError(value: unknown): value is ChannelError {
  try {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[brand] === true;
  } catch {
    return false; // what user code threw may throw when read (a revoked Proxy)
  }
}
