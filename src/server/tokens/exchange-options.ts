// What createTokenExchange takes and returns, and the checks of both the options and a user id.
import { checkKeys, describeValue, fail, milliseconds } from '../../shared/check.js';
import { MAX_DELAY } from '../../shared/signal.js';
import type { TelemetryOptions } from '../../shared/otel-api.js';
import { checkServerTelemetry } from '../telemetry/guarded-telemetry.js';
import type { SignFunction } from './signing.js';
import type { ExchangedToken, TokenCache, TokenCacheErrorInfo } from './token-cache.js';

/** The token endpoint's path, as the service's interface gives it. */
export const TOKEN_PATH = '/open/api/v1/sdk/tokens';
/** Longest `external_user_id` the service accepts (1 to 128 characters), in Unicode code points. */
export const MAX_EXTERNAL_USER_ID = 128;

/** Options of {@link createTokenExchange}. */
export interface TokenExchangeOptions {
  /** The service's base URL, e.g. `https://channel.example.com`. */
  baseUrl: string;
  /** Access key (AK) from the integration configuration. */
  accessKey: string;
  /** Secret key (SK). Only ever used to sign; never logged or put in an error. */
  secretKey: string;
  /** Produces the `X-Channel-*` headers. @default the reference scheme (README) */
  sign?: SignFunction;
  /** @default globalThis.fetch */
  fetch?: typeof fetch;
  /**
   * Per-user token cache. Pass `createRedisTokenCache(redis)` (or your own {@link TokenCache})
   * to share tokens, and token calls, between instances.
   * @default an in-memory LRU of 10,000 users
   */
  cache?: TokenCache;
  /**
   * Milliseconds for the token call (signing, answer and body). Waiting on another instance that
   * holds the cache's lock for the same user is bounded too: 5 s at most, within this. @default 10000
   */
  timeout?: number;
  /**
   * Milliseconds each cache call (get, set, lock, renew, release) may take, and the cache calls
   * of one `getToken` (read, lock, re-read) in all. A cache that does not answer in time is
   * skipped and the service asked instead, so a frozen, unreachable or slow Redis adds at most
   * this much to a `getToken` (waiting for another instance's token, or once for an ioredis
   * client's first connection, is bounded apart: docs/guide/token-cache.md). @default 200
   */
  cacheTimeout?: number;
  /**
   * Milliseconds for which the cache is skipped after a call to it failed or timed out: tokens
   * come from the service (and are kept in this process's memory meanwhile), then one call
   * tries the cache again. 0: never skip, every call tries the cache. @default 5000
   */
  cacheCooldown?: number;
  /**
   * Milliseconds during which a token that a forced refresh obtained answers further forced
   * refreshes of the same user (on every instance sharing the cache), instead of another call to
   * the service. It is newer than any token that got a 401 before it was asked for; a token
   * from a plain cached call never counts. 0: every forced refresh calls the service. @default 5000
   */
  forceRefreshWindow?: number;
  /**
   * Seconds before expiry at which a cached token is no longer handed out. A token that lives
   * less than twice this long is handed out for the first half of its life. @default 60
   */
  cacheMargin?: number;
  /**
   * Called when a cache call failed, timed out or returned something that is not a token (the
   * exchange went on without the cache). Never receives a token or secret.
   * @default a console.warn the first time, then silence
   */
  onCacheError?: (info: TokenCacheErrorInfo) => void;
  /**
   * OpenTelemetry: a span per getToken (`channel.cache`: hit, miss, bypass), the wait for another
   * instance's lock, and each token call (a CLIENT span, with a `traceparent` header); metrics
   * with a meter (docs/guide/telemetry.md). Never a user id, token or key.
   * @example telemetry: { tracer: trace.getTracer('channel-sdk'), meter: metrics.getMeter('channel-sdk') }
   */
  telemetry?: TelemetryOptions;
}

/** What {@link createTokenExchange} returns. */
export interface TokenExchange {
  /**
   * A user JWT for `externalUserId`: from the cache while it has more than `cacheMargin` left,
   * else from the service (concurrent calls for one user share one request, across instances
   * when the cache has a `lock`). `forceRefresh: true` never answers from the cache: it asks the
   * service, or shares a forced refresh of that user under way or obtained within
   * `forceRefreshWindow` (never the token whose fingerprint is `rejected`: tokenProvider's
   * context names the token a 401 rejected); use it when the SDK's provider is called with it. `signal` lets this
   * caller stop waiting; the shared request goes on for the others. Rejects with
   * `TokenExchangeError` or `ConfigError` only.
   */
  getToken(externalUserId: string, options?: { forceRefresh?: boolean; signal?: AbortSignal; rejected?: string | undefined }): Promise<ExchangedToken>;
}

/**
 * What is wrong with an external user id, or undefined when it is fine (1 to 128 characters). Length is
 * in code points, so that a CJK or emoji id counts as the characters a person sees.
 * Shared by `getToken` and the sandbox's token endpoint.
 */
export function externalUserIdProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return 'must be a string (your user id); got ' + (value === null ? 'null' : typeof value);
  if (value === '') return 'must not be empty';
  if (value.length <= MAX_EXTERNAL_USER_ID) return undefined; // code points never outnumber UTF-16 units
  const length = Array.from(value).length;
  return length > MAX_EXTERNAL_USER_ID ? 'is ' + length + ' characters; the service allows at most ' + MAX_EXTERNAL_USER_ID : undefined;
}

// An unpaired UTF-16 surrogate (in unicode mode \p{Cs} matches no half of a pair).
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Why a user id that the service allows cannot be a cache key, or undefined: a lone surrogate. It
 * is not well-formed text, and Redis clients (ioredis, node-redis) encode each one, and U+FFFD,
 * as the same three bytes: 'user-\ud800', 'user-\udbff' and 'user-\ufffd' would share one key,
 * and one user's token.
 */
export function userIdKeyProblem(value: string): string | undefined {
  const at = value.search(LONE_SURROGATE);
  if (at < 0) return undefined;
  const unit = value.charCodeAt(at).toString(16);
  return (
    'has a lone surrogate (\\u' +
    unit +
    ' at index ' +
    at +
    '): it is not well-formed text, and a Redis client would store it as U+FFFD, under the key of another user. Pass the id as your database holds it, decoded as UTF-8'
  );
}

const optionKeys = [
  'baseUrl',
  'accessKey',
  'secretKey',
  'sign',
  'fetch',
  'cache',
  'timeout',
  'cacheTimeout',
  'cacheCooldown',
  'forceRefreshWindow',
  'cacheMargin',
  'onCacheError',
  'telemetry',
];

/** A value in an option's message: numbers as they are. */
export const shown = (value: unknown) => (typeof value === 'number' ? String(value) : describeValue(value));
/**
 * True in a web page: a document and no Node (jsdom and happy-dom tests run in Node; Deno, Bun and
 * edge workers have no document). channel-sdk/server resolves there too, to its Web Crypto build.
 */
export function inWebPage(g: { document?: unknown; process?: { versions?: { node?: unknown } } } = globalThis): boolean {
  return typeof g.document === 'object' && g.document !== null && !g.process?.versions?.node;
}

/** Throws ConfigError for the first option that is wrong. */
export function checkOptions(o: TokenExchangeOptions): void {
  // The spec: the page and the SDK's client never hold the access key or the secret key.
  if (inWebPage()) {
    fail(
      "createTokenExchange runs on your backend only: it needs your secret key, and anyone can read a page's code. In the page use createClient from 'channel-sdk', with a tokenProvider that asks your backend's token route (createTokenRoute)",
    );
  }
  if (typeof o !== 'object' || o === null) fail('createTokenExchange needs an options object: { baseUrl, accessKey, secretKey }');
  checkKeys(o, optionKeys, 'createTokenExchange option');
  if (typeof o.accessKey !== 'string' || !o.accessKey) fail('accessKey must be the non-empty access key from the integration configuration');
  if (typeof o.secretKey !== 'string' || !o.secretKey) fail('secretKey must be the non-empty secret key from the integration configuration');
  const ms = [
    ['timeout', 1, 10000],
    ['cacheTimeout', 1, 200],
    ['cacheCooldown', 0, 5000],
    ['forceRefreshWindow', 0, 5000],
  ] as const;
  for (const [name, min, example] of ms) {
    const value = o[name];
    if (value !== undefined) milliseconds(name, value, min, MAX_DELAY, example);
  }
  if (o.cacheMargin !== undefined && !(typeof o.cacheMargin === 'number' && o.cacheMargin >= 0 && o.cacheMargin <= MAX_DELAY / 1000)) {
    fail('cacheMargin must be a number of seconds, 0 or more (e.g. 60); got ' + shown(o.cacheMargin));
  }
  for (const name of ['sign', 'fetch', 'onCacheError'] as const) {
    if (o[name] !== undefined && typeof o[name] !== 'function') fail(name + ' must be a function; got ' + shown(o[name]));
  }
  checkServerTelemetry(o.telemetry, 'createTokenExchange');
  const cache = o.cache as Partial<TokenCache> | undefined;
  if (
    cache !== undefined &&
    (typeof cache !== 'object' ||
      cache === null ||
      typeof cache.get !== 'function' ||
      typeof cache.set !== 'function' ||
      (cache.lock !== undefined && typeof cache.lock !== 'function'))
  ) {
    fail(
      'cache must be an object with get(key) and set(key, value, ttlMs) methods (and optionally lock(key, ttlMs)), e.g. createRedisTokenCache(redis); got ' +
        shown(cache),
    );
  }
}
