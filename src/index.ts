/**
 * channel-sdk for browsers and any runtime with `fetch` (Node >= 20, Deno, Bun, workers):
 * `createClient` over a ky transport.
 * @packageDocumentation
 */
import { createCoreClient, type BaseClient } from './core/client.js';
import type { CoreClientOptions, FileCallOptions, UploadFields } from './core/types.js';
import { describeValue, fail, optionalString } from './shared/check.js';
import { isJwt } from './core/token-lifecycle/jwt-claims.js';
import { createFetchTransport, type KyPassThrough } from './transports/fetch.js';
import { readFetchArguments } from './transports/fetch-arguments.js';
import { createNativeFetch } from './transports/fetch-native.js';
import { createOpenBodies } from './transports/open-bodies.js';
import { lazyShare } from './tokens/lazy-share.js';
import { pageSignals } from './transports/page-signals.js';

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

/** Options of `client.upload()` in a browser (or any runtime with fetch). */
export interface UploadOptions<T = unknown> extends UploadFields<T> {
  /** The Blob or File to send, e.g. `input.files[0]`. Required. */
  file: Blob;
  /** The file name sent with it. @default the File's own name, else "blob" */
  fileName?: string;
}

/** Options of `client.download()` in a browser. */
export interface DownloadOptions extends FileCallOptions {
  /**
   * Resolve to the `Response` (status 2xx only) instead of reading it into a Blob: for a stream,
   * or a file too large to hold. `timeout` and `signal` then end at the headers: the body is
   * yours to read, or to stop with `response.body.cancel()`; clearToken() (or a new tokenStore
   * key()) still stops it. @default false
   */
  raw?: boolean;
}

/** A client of the browser entry: requests, and files as multipart / Blob through ky. */
export interface Client extends BaseClient {
  /**
   * Uploads a Blob or File as multipart (ky, with upload progress where the browser can stream
   * it); a 401 refreshes once and sends the file once more. Resolves to the envelope's `data`.
   * @example
   * const { url } = await client.upload<{ url: string }>('/open/api/v1/sdk/photos', { file: input.files[0], name: 'file' });
   */
  upload<T = unknown>(path: string, options: UploadOptions<T>): Promise<T>;
  /** Downloads with the token into a Blob; a 401 refreshes once; any other non-2xx is an `HttpError`, never a Blob. */
  download(path: string, options?: DownloadOptions & { raw?: false }): Promise<Blob>;
  /** With `raw: true`: the 2xx `Response` itself, its body unread. */
  download(path: string, options: DownloadOptions & { raw: true }): Promise<Response>;
  /**
   * A `fetch` bound to `baseUrl`, for a stack of your own (openapi-fetch, ofetch, axios's fetch
   * adapter, a GraphQL client, TanStack Query): a path, a URL under baseUrl or a Request. Every
   * attempt carries the token; a 401 refreshes once (shared with every other call) and sends
   * the request once more, its body included; `signal` and clearToken() stop it as any call, and
   * also the body you read after it resolved.
   * Otherwise it is fetch: every HTTP status resolves as the Response, its body unread, and
   * there are no retries of its own (see `isRetryable`). Another origin, or a path above
   * baseUrl's, is refused with a ConfigError and nothing is sent.
   * @example
   * const api = createFetchClient<paths>({ baseUrl: 'https://api.example.com', fetch: client.fetch });
   */
  fetch: typeof fetch;
}

/**
 * Creates a client that sends `Authorization: Bearer <token>` with every request, refreshes
 * once and replays once on 401, and unwraps the service's `{ code, data }` envelope.
 * @example
 * const client = createClient({
 *   baseUrl: 'https://api.example.com',
 *   // With forceRefresh the route must skip its cache; `rejected` names the token a 401 refused.
 *   tokenProvider: async ({ forceRefresh, rejected }) => {
 *     const r = await fetch('/my-backend/channel-token' + (forceRefresh ? '?force=1&rejected=' + (rejected || '') : ''));
 *     return (await r.json()).access_token;
 *   },
 * });
 * const data = await client.get('/open/api/v1/sdk/orders');
 */
export function createClient(options: ClientOptions): Client {
  const { fetch, ky, crossTab } = (options || {}) as ClientOptions;
  if (crossTab !== undefined && !(crossTab && typeof crossTab.key === 'string' && crossTab.key)) {
    fail('crossTab must be { key: userId }; got ' + describeValue(crossTab));
  }
  // The bodies callers read after their call resolved: the client's fence (clearToken(), another user) reaches them too.
  const bodies = createOpenBodies();
  const overKy = createFetchTransport({ fetch, ky, bodies });
  const native = createNativeFetch(fetch, bodies);
  const signals = pageSignals();
  return createCoreClient(
    options,
    {
      // Every call through ky; client.fetch's attempts to fetch itself (its native transport below).
      transport: overKy,
      createAbortController: () => new AbortController(),
      fence: bodies.fence,
      // Where the OpenTelemetry API registers itself: a call's spans keep the context active as it starts.
      scope: globalThis,
      // A separate chunk: clients without crossTab never load it.
      share:
        crossTab &&
        ((config) => lazyShare(import('./tokens/cross-tab.js').then((m) => m.createCrossTab(config.base, crossTab.key, config.tokenTimeout, isJwt)))),
      files: {
        upload: ['file', 'fileName'],
        download: ['raw'],
        hints: { filepath: 'file', blob: 'file', body: 'file' },
        take: (u) => {
          const blob = u.file as Blob | undefined;
          if (!(blob && typeof blob === 'object' && typeof blob.size === 'number' && typeof blob.type === 'string'))
            fail('file must be a Blob or File, e.g. input.files[0]; got ' + describeValue(blob));
          return { blob, fileName: optionalString(u, 'fileName') };
        },
      },
      native: { read: readFetchArguments, methods: (run) => ({ fetch: run }), transport: native },
      // The tab's visibility and navigator.onLine, where there are (not in Node).
      visibility: signals.visibility,
      network: signals.network,
    },
    ['fetch', 'ky', 'crossTab'],
  ) as Client;
}

export type { KyPassThrough } from './transports/fetch.js';
export * from './client-exports.js';
