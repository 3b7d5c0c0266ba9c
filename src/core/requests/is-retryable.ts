import { isChannelError } from '../../errors/ChannelError.js';

/**
 * Whether a failed call is worth another try by a caller with a retry of its own (TanStack
 * Query's `retry`, a queue's): true for a network failure, a timeout (also the call's signal
 * timing out, fetch's TimeoutError of a body read too) and HTTP 408, 429 or 5xx; false for everything else: an `UnauthorizedError` (the
 * SDK already refreshed and replayed once), any other 4xx, a non-zero `code` in a 2xx envelope,
 * a `ConfigError`, an abort or `clearToken()`, a `tokenProvider` failure (the next call asks the
 * provider again anyway). It reads the SDK's error also where another library wrapped it
 * (ofetch's `FetchError`, an `AxiosError`: their `cause`), and a status where there is one (a
 * `Response`, `status`, `statusCode`, axios' `response.status`).
 * @example
 * new QueryClient({ defaultOptions: { queries: { retry: (count, error) => count < 3 && isRetryable(error) } } });
 */
export function isRetryable(error: unknown): boolean {
  let e = error as { status?: unknown; statusCode?: unknown; response?: { status?: unknown }; cause?: unknown; code?: unknown; name?: unknown } | undefined;
  for (let depth = 0; depth < 5 && e && typeof e === 'object'; depth++, e = e.cause as typeof e) {
    // The SDK's own error: its code says it, or the HTTP status it carries. Also fetch's TimeoutError
    // (the call's signal timing out while its caller reads client.fetch's body).
    const status = isChannelError(e)
      ? e.code === 'NETWORK_ERROR' || e.code === 'TIMEOUT'
        ? 503
        : e.code === 'HTTP_ERROR' || e.code === 'API_ERROR'
          ? (e as { status?: unknown }).status
          : 0
      : e.name === 'TimeoutError'
        ? 503
        : e.status !== undefined
          ? e.status
          : e.statusCode !== undefined
            ? e.statusCode
            : e.response && e.response.status;
    if (status !== undefined) return typeof status === 'number' && (status === 408 || status === 429 || (status >= 500 && status < 600));
  }
  return false;
}
