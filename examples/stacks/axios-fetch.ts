import { create } from 'axios';
import type { Client } from 'channel-sdk';

/** axios on its fetch adapter, with the token engine as that fetch. */
export function createAxios(client: Client, baseURL: string) {
  return create({ baseURL, adapter: 'fetch', env: { fetch: client.fetch } });
}
