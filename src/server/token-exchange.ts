import { normalizeBaseUrl } from '../core/url.js';
import { ConfigError } from '../errors/ConfigError.js';
import { TokenExchangeError } from '../errors/TokenExchangeError.js';
import { describeIssues, tokenResponseSchema } from '../schemas/logistics.js';
import type { SignFunction } from './signing.js';

/** The token endpoint's path (spec §4.1). */
export const TOKEN_PATH = '/open/api/v1/sdk/tokens';
/** Longest `external_user_id`, in Unicode code points (spec §2.1). */
export const MAX_EXTERNAL_USER_ID = 128;

/** A user token as `getToken` returns it. */
export interface ExchangedToken {
  /** The JWT: hand exactly this string to the SDK's tokenProvider. */
  accessToken: string;
  /** Lifetime in seconds as issued (currently 900). */
  expiresIn: number;
  /** Always `'Bearer'`. */
  tokenType: 'Bearer';
  /** Epoch ms at which the token expires, counted from when the answer arrived. */
  expiresAt: number;
}

/**
 * Where tokens are cached, per user. The default is in memory; pass one backed by Redis or
 * similar to share tokens between backend instances. Values are plain JSON-safe objects.
 */
export interface TokenCache {
  get(key: string): ExchangedToken | undefined | Promise<ExchangedToken | undefined>;
  /** Keep `value` for `ttlMs` milliseconds. */
  set(key: string, value: ExchangedToken, ttlMs: number): void | Promise<void>;
}

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
  /** Per-user token cache. @default an in-memory LRU of 10,000 users */
  cache?: TokenCache;
  /** Milliseconds for the token call. @default 10000 */
  timeout?: number;
  /** Seconds before expiry at which a cached token is no longer handed out. @default 60 */
  cacheMargin?: number;
}

/** What {@link createTokenExchange} returns. */
export interface TokenExchange {
  /**
   * A user JWT for `externalUserId`: from the cache while it has more than `cacheMargin` left,
   * else from the service (concurrent calls for one user share one request).
   * `forceRefresh: true` always asks the service; use it when the SDK's provider is called with it.
   */
  getToken(externalUserId: string, options?: { forceRefresh?: boolean; signal?: AbortSignal }): Promise<ExchangedToken>;
}

/** A bounded in-memory cache: least recently used entries go first. */
export function createMemoryTokenCache(maxEntries = 10000): TokenCache {
  const entries = new Map<string, { value: ExchangedToken; until: number }>();
  return {
    get(key) {
      const entry = entries.get(key);
      if (!entry) return undefined;
      entries.delete(key);
      if (Date.now() >= entry.until) return undefined;
      entries.set(key, entry); // most recently used last
      return entry.value;
    },
    set(key, value, ttlMs) {
      entries.delete(key);
      entries.set(key, { value, until: Date.now() + ttlMs });
      while (entries.size > maxEntries) entries.delete(entries.keys().next().value as string);
    },
  };
}

/**
 * What is wrong with an external user id, or undefined when it is fine (spec §2.1). Length is
 * in code points, so that a CJK or emoji id counts as the characters a person sees.
 * Shared by `getToken` and the sandbox's token endpoint.
 */
export function externalUserIdProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return 'must be a string (your user id); got ' + (value === null ? 'null' : typeof value);
  if (value === '') return 'must not be empty';
  const length = Array.from(value).length;
  return length > MAX_EXTERNAL_USER_ID ? 'is ' + length + ' characters; the service allows at most ' + MAX_EXTERNAL_USER_ID : undefined;
}

export function createTokenExchangeFactory(defaultSign: SignFunction) {
  // Documented where it is exported: src/server.ts.
  return function createTokenExchange(options: TokenExchangeOptions): TokenExchange {
    const o = options || ({} as TokenExchangeOptions);
    if (typeof o.accessKey !== 'string' || !o.accessKey) throw new ConfigError('accessKey must be the non-empty access key from the integration configuration');
    if (typeof o.secretKey !== 'string' || !o.secretKey) throw new ConfigError('secretKey must be the non-empty secret key from the integration configuration');
    const url = normalizeBaseUrl(o.baseUrl) + TOKEN_PATH;
    const path = url.replace(/^https?:\/\/[^/]+/i, '');
    const sign = o.sign || defaultSign;
    const doFetch = o.fetch || ((input, init) => fetch(input, init));
    const cache = o.cache || createMemoryTokenCache();
    const timeout = o.timeout ?? 10000;
    const margin = (o.cacheMargin ?? 60) * 1000;
    const inflight = new Map<string, Promise<ExchangedToken>>();

    async function request(externalUserId: string, signal?: AbortSignal): Promise<ExchangedToken> {
      const body = JSON.stringify({ external_user_id: externalUserId });
      const headers = { ...(await sign({ method: 'POST', url, path, body, accessKey: o.accessKey, secretKey: o.secretKey })), 'Content-Type': 'application/json' };
      const timer = AbortSignal.timeout(timeout);
      let response: Response;
      try {
        response = await doFetch(url, { method: 'POST', headers, body, signal: signal ? AbortSignal.any([signal, timer]) : timer });
      } catch (error) {
        if (timer.aborted) throw new TokenExchangeError('the token endpoint did not answer within ' + timeout + ' ms (timeout)', { method: 'POST', url });
        throw new TokenExchangeError('could not reach the token endpoint: ' + (error instanceof Error ? error.message : String(error)), { method: 'POST', url, cause: error });
      }
      const text = await response.text();
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        value = undefined;
      }
      const envelope = typeof value === 'object' && value !== null ? (value as { code?: unknown; message?: unknown; msg?: unknown }) : undefined;
      const apiCode = envelope && (typeof envelope.code === 'number' || typeof envelope.code === 'string') ? envelope.code : undefined;
      const said = envelope && typeof (envelope.message ?? envelope.msg) === 'string' ? ': ' + String(envelope.message ?? envelope.msg).slice(0, 200) : '';
      const context = { method: 'POST', url, status: response.status, apiCode };
      if (!response.ok) throw new TokenExchangeError('the token endpoint answered HTTP ' + response.status + (apiCode !== undefined ? ' with code ' + apiCode : '') + said, context);
      if (apiCode !== undefined && apiCode !== 0) throw new TokenExchangeError('the token endpoint answered code ' + apiCode + said, context);
      const parsed = tokenResponseSchema.safeParse(value);
      if (!parsed.success) {
        throw new TokenExchangeError(
          "the token endpoint's answer is not { code: 0, data: { access_token, expires_in, token_type: 'Bearer' } }: " + describeIssues(parsed.error.issues).join('; '),
          context,
        );
      }
      const { access_token, expires_in } = parsed.data.data;
      return { accessToken: access_token, expiresIn: expires_in, tokenType: 'Bearer', expiresAt: Date.now() + expires_in * 1000 };
    }

    return {
      async getToken(externalUserId, { forceRefresh = false, signal } = {}) {
        const problem = externalUserIdProblem(externalUserId);
        if (problem) throw new ConfigError('externalUserId ' + problem);
        const key = o.accessKey + ':' + externalUserId;
        if (!forceRefresh) {
          const cached = await cache.get(key);
          if (cached && cached.expiresAt - Date.now() > margin) return cached;
        }
        // One request per user at a time. A forced call may join one in flight: that one
        // reaches the service too, so it brings a token newer than any that was rejected.
        let pending = inflight.get(key);
        if (!pending) {
          pending = request(externalUserId, signal).then(async (token) => {
            await cache.set(key, token, Math.max(0, token.expiresAt - Date.now() - margin));
            return token;
          });
          const done = () => inflight.delete(key);
          pending.then(done, done);
          inflight.set(key, pending);
        }
        return pending;
      },
    };
  };
}
