import type { Client } from 'channel-sdk';
import { createFetch } from 'ofetch';

/**
 * ofetch with the token engine as its fetch: its own options (baseURL, query, retry...) as usual.
 * Its `timeout` aborts the call's signal (the SDK's TimeoutError, which isRetryable calls worth
 * another try) and makes ofetch retry any abort, clearToken()'s too: such a retry of a call the
 * logout ended carries the same signal, and the SDK refuses it unsent.
 */
export function createApiFetch(client: Client, baseURL: string) {
  return createFetch({ fetch: client.fetch }).create({ baseURL });
}
