/**
 * channel-sdk for browsers and any runtime with `fetch` (Node >= 20, Deno, Bun, workers):
 * `createClient` over a ky transport.
 * @packageDocumentation
 */
import { createCoreClient, type Client } from './core/client.js';
import type { CoreClientOptions } from './core/types.js';
import { createFetchTransport, type KyPassThrough } from './transports/fetch.js';

/** Options of the browser/fetch `createClient`. */
export interface ClientOptions extends CoreClientOptions {
  /** A fetch implementation (SSR frameworks' own fetch, instrumentation). @default globalThis.fetch */
  fetch?: typeof fetch;
  /** ky options passed through (hooks, credentials, ...); the ones the SDK owns are refused. */
  ky?: KyPassThrough;
}

/**
 * Creates a client that sends `Authorization: Bearer <token>` with every request, refreshes
 * once and replays once on 401, and unwraps the service's `{ code, data }` envelope.
 * @example
 * const client = createClient({
 *   baseUrl: 'https://api.example.com',
 *   tokenProvider: async ({ forceRefresh }) => {
 *     const r = await fetch('/my-backend/channel-token' + (forceRefresh ? '?force=1' : ''));
 *     return (await r.json()).access_token;
 *   },
 * });
 * const data = await client.get('/open/api/v1/sdk/orders');
 */
export function createClient(options: ClientOptions): Client {
  const { fetch, ky } = (options || {}) as ClientOptions;
  return createCoreClient(options, { transport: createFetchTransport({ fetch, ky }), createAbortController: () => new AbortController() }, [
    'fetch',
    'ky',
  ]);
}

export type { KyPassThrough } from './transports/fetch.js';
export * from './client-exports.js';
