import { QueryClient } from '@tanstack/query-core';
import { isRetryable, type Client } from 'channel-sdk';

/**
 * TanStack Query over client.fetch: a 401 is the SDK's (one shared refresh, one replay), so the
 * query's own `retry` only tries again what isRetryable calls worth it (network failures,
 * timeouts, 408, 429, 5xx); never a 401 after the replay, a 404 or an abort.
 */
export const queryClient = new QueryClient({
  defaultOptions: { queries: { retry: (failures, error) => failures < 3 && isRetryable(error) } },
});

/** A queryFn for a path: the query's signal cancels the request; a failed status throws with it. */
export function channelQuery<T>(client: Client) {
  return async ({ queryKey, signal }: { queryKey: readonly unknown[]; signal: AbortSignal }): Promise<T> => {
    const response = await client.fetch(String(queryKey[0]), { signal });
    if (!response.ok) throw Object.assign(new Error('HTTP ' + response.status + ' from ' + String(queryKey[0])), { status: response.status });
    return (await response.json()) as T;
  };
}
