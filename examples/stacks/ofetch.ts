import type { Client } from 'channel-sdk';
import { createFetch } from 'ofetch';

/** ofetch with the token engine as its fetch: its own options (baseURL, query, retry...) as usual. */
export function createApiFetch(client: Client, baseURL: string) {
  return createFetch({ fetch: client.fetch }).create({ baseURL });
}
