/**
 * channel-sdk for browsers and any runtime with `fetch` (Node >= 20, Deno, Bun, workers):
 * `createClient` over a ky transport.
 * @packageDocumentation
 */
import { createCoreClient, type Client } from './core/client.js';
import type { CoreClientOptions } from './core/types.js';
import { describe, fail } from './core/check.js';
import { isJwt } from './core/jwt.js';
import { createFetchTransport, type KyPassThrough } from './transports/fetch.js';
import { lazyShare } from './tokens/lazy-share.js';

/** Options of the browser/fetch `createClient`. */
export interface ClientOptions extends CoreClientOptions {
  /** A fetch implementation (SSR frameworks' own fetch, instrumentation). @default globalThis.fetch */
  fetch?: typeof fetch;
  /** ky options passed through (hooks, credentials, ...); the ones the SDK owns are refused. */
  ky?: KyPassThrough;
  /**
   * Share one token and its refreshes with the other tabs of this origin whose client has the
   * same `baseUrl` and `key` (use the signed-in user's id, so that two users never share):
   * one provider call for a burst across tabs, one forced refresh after a 401 in any of them,
   * and clearToken() in one clears all (a token asked for before it is never taken after it).
   * BroadcastChannel + Web Locks, every wait bounded by `tokenTimeout`; where either is missing
   * each tab keeps its own token. Trusts the scripts of the origin; a message that is not a
   * well-formed announcement with a JWT is ignored. Off by default.
   * @example crossTab: { key: currentUser.id }
   */
  crossTab?: { key: string };
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
  const { fetch, ky, crossTab } = (options || {}) as ClientOptions;
  if (crossTab !== undefined && !(crossTab && typeof crossTab.key === 'string' && crossTab.key)) {
    fail('crossTab must be { key: userId }; got ' + describe(crossTab));
  }
  return createCoreClient(
    options,
    {
      transport: createFetchTransport({ fetch, ky }),
      createAbortController: () => new AbortController(),
      // A separate chunk: clients without crossTab never load it.
      share: crossTab && ((config) => lazyShare(import('./tokens/cross-tab.js').then((m) => m.createCrossTab(config.base, crossTab.key, config.tokenTimeout, isJwt)))),
    },
    ['fetch', 'ky', 'crossTab'],
  );
}

export type { KyPassThrough } from './transports/fetch.js';
export * from './client-exports.js';
