import type { Client } from 'channel-sdk';
import createFetchClient from 'openapi-fetch';

/**
 * openapi-fetch with the token engine as its fetch: `Paths` are the types openapi-typescript
 * generates from your OpenAPI document. Every request carries the token; a 401 costs one refresh
 * shared with the whole app, then one replay, before openapi-fetch sees the answer.
 */
export function createApi<Paths extends {}>(client: Client, baseUrl: string) {
  return createFetchClient<Paths>({ baseUrl, fetch: client.fetch });
}
