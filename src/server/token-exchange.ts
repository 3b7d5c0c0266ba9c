import { checkKeys, describe } from '../core/check.js';
import { onAbort, raceSignal } from '../core/signal.js';
import { normalizeBaseUrl } from '../core/url.js';
import { ConfigError } from '../errors/ConfigError.js';
import { TokenExchangeError } from '../errors/TokenExchangeError.js';
import { describeIssues, tokenResponseSchema } from '../schemas/logistics.js';
import type { SignFunction } from './signing.js';
import {
  cacheTtl,
  coarseNow,
  copyToken,
  createMemoryTokenCache,
  isFresh,
  tokenCacheKey,
  tokenCacheKeyPart,
  type ExchangedToken,
  type TokenCache,
  type TokenCacheErrorInfo,
  type TokenCacheLock,
} from './token-cache.js';
import { describeAnswer, describeHttpRefusal, describeUnreachable, describeUrlMistake } from './token-messages.js';

/** The token endpoint's path (spec §4.1). */
export const TOKEN_PATH = '/open/api/v1/sdk/tokens';
/** Longest `external_user_id`, in Unicode code points (spec §2.1). */
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
   * Milliseconds for the token call (signing, answer and body), and for each cache call: a cache
   * that does not answer in time is skipped and the service asked instead. @default 10000
   */
  timeout?: number;
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
}

/** What {@link createTokenExchange} returns. */
export interface TokenExchange {
  /**
   * A user JWT for `externalUserId`: from the cache while it has more than `cacheMargin` left,
   * else from the service (concurrent calls for one user share one request, across instances
   * when the cache has a `lock`). `forceRefresh: true` always asks the service; use it when the
   * SDK's provider is called with it. `signal` lets this caller stop waiting; the shared request
   * goes on for the others. Rejects with `TokenExchangeError` or `ConfigError` only.
   */
  getToken(externalUserId: string, options?: { forceRefresh?: boolean; signal?: AbortSignal }): Promise<ExchangedToken>;
}

/**
 * What is wrong with an external user id, or undefined when it is fine (spec §2.1). Length is
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

const optionKeys = ['baseUrl', 'accessKey', 'secretKey', 'sign', 'fetch', 'cache', 'timeout', 'cacheMargin', 'onCacheError'];
const MAX_TIMER = 2147483647;
/** What a bounded cache call resolves to when it failed or timed out. */
const FAILED = Symbol('cache call failed');
type Outcome<T> = T | typeof FAILED;
/** A cache read: synchronous for a synchronous cache. */
type CacheRead = Outcome<ExchangedToken | undefined> | Promise<Outcome<ExchangedToken | undefined>>;

const shown = (value: unknown) => (typeof value === 'number' ? String(value) : describe(value));
const isThenable = <T>(value: unknown): value is PromiseLike<T> => typeof (value as PromiseLike<T> | null)?.then === 'function';
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
function checkOptions(o: TokenExchangeOptions): void {
  if (typeof o !== 'object' || o === null) throw new ConfigError('createTokenExchange needs an options object: { baseUrl, accessKey, secretKey }');
  checkKeys(o, optionKeys, 'createTokenExchange option');
  if (typeof o.accessKey !== 'string' || !o.accessKey) throw new ConfigError('accessKey must be the non-empty access key from the integration configuration');
  if (typeof o.secretKey !== 'string' || !o.secretKey) throw new ConfigError('secretKey must be the non-empty secret key from the integration configuration');
  if (o.timeout !== undefined && !(typeof o.timeout === 'number' && o.timeout >= 1 && o.timeout <= MAX_TIMER)) {
    throw new ConfigError('timeout must be a number of milliseconds from 1 to ' + MAX_TIMER + ' (e.g. 10000); got ' + shown(o.timeout));
  }
  if (o.cacheMargin !== undefined && !(typeof o.cacheMargin === 'number' && o.cacheMargin >= 0 && o.cacheMargin <= MAX_TIMER / 1000)) {
    throw new ConfigError('cacheMargin must be a number of seconds, 0 or more (e.g. 60); got ' + shown(o.cacheMargin));
  }
  for (const name of ['sign', 'fetch', 'onCacheError'] as const) {
    if (o[name] !== undefined && typeof o[name] !== 'function') throw new ConfigError(name + ' must be a function; got ' + shown(o[name]));
  }
  const cache = o.cache as Partial<TokenCache> | undefined;
  if (cache !== undefined && (typeof cache !== 'object' || cache === null || typeof cache.get !== 'function' || typeof cache.set !== 'function' || (cache.lock !== undefined && typeof cache.lock !== 'function'))) {
    throw new ConfigError('cache must be an object with get(key) and set(key, value, ttlMs) methods (and optionally lock(key, ttlMs)), e.g. createRedisTokenCache(redis); got ' + shown(cache));
  }
}

export function createTokenExchangeFactory(defaultSign: SignFunction) {
  // Documented where it is exported: src/server.ts.
  return function createTokenExchange(options: TokenExchangeOptions): TokenExchange {
    checkOptions(options);
    const o = options;
    const baseUrl = normalizeBaseUrl(o.baseUrl);
    const url = baseUrl + TOKEN_PATH;
    const path = url.replace(/^https?:\/\/[^/]+/i, '');
    const sign = o.sign || defaultSign;
    const doFetch = o.fetch || ((input, init) => fetch(input, init));
    const cache = o.cache || createMemoryTokenCache();
    const timeout = o.timeout ?? 10000;
    const margin = (o.cacheMargin ?? 60) * 1000;
    // The holder of a cross-instance lock calls the service (bounded by `timeout`), stores the
    // token and lets go; a holder that died lets go when the lock expires.
    const lockTtl = Math.min(timeout + 1000, MAX_TIMER);
    let warned = false;
    const onCacheError =
      o.onCacheError ||
      ((info: TokenCacheErrorInfo) => {
        if (warned) return;
        warned = true;
        console.warn('[channel-sdk] token cache ' + info.operation + ' failed (' + info.message + '); asking the token endpoint instead. Pass onCacheError to handle this yourself; this warning is shown once.');
      });
    // Flights per cache key: `shared` may end with a token another instance stored, `forced`
    // always with one from the service (a forced caller joins only those).
    const shared = new Map<string, Promise<ExchangedToken>>();
    const forced = new Map<string, Promise<ExchangedToken>>();
    const context = { method: 'POST', url };
    const keyPrefix = tokenCacheKey(baseUrl, o.accessKey, '');

    /** Cuts the secret key and anything JWT-shaped out of text that goes into an error or report. */
    function redact(text: string): string {
      // A JWT's header is JSON: its base64url starts with eyJ. Long three-part strings go too;
      // host names (a few short labels) stay readable.
      return text.split(o.secretKey).join('[secret]').replace(/[\w-]*eyJ[\w-]+\.[\w-]+\.[\w-]*|[\w-]{16,}\.[\w-]{16,}\.[\w-]{16,}/g, '[token]');
    }
    const messageOf = (error: unknown) => redact(error instanceof Error ? error.name + ': ' + error.message : String(error)).slice(0, 300);

    function report(operation: TokenCacheErrorInfo['operation'], reason: TokenCacheErrorInfo['reason'], error?: unknown) {
      const message =
        reason === 'timeout' ? 'no answer within ' + timeout + ' ms' : reason === 'invalid' ? 'the cache returned ' + describe(error) + ', not a token' : messageOf(error);
      try {
        onCacheError({ operation, reason, message });
      } catch {
        // A throwing hook must not turn a working fallback into a failure.
      }
    }

    /** Runs one cache call, bounded by `ms`. Synchronous caches answer synchronously (the hit path). */
    function callCache<T>(operation: TokenCacheErrorInfo['operation'], run: () => T | PromiseLike<T>, ms: number): Outcome<T> | Promise<Outcome<T>> {
      let result: T | PromiseLike<T>;
      try {
        result = run();
      } catch (error) {
        report(operation, 'error', error);
        return FAILED;
      }
      if (!isThenable<T>(result)) return result;
      return new Promise<Outcome<T>>((resolve) => {
        let settled = false;
        const timer = setTimeout(() => {
          settled = true;
          report(operation, 'timeout');
          resolve(FAILED);
        }, Math.max(1, Math.min(ms, timeout)));
        result.then(
          (value) => {
            clearTimeout(timer);
            if (!settled) return resolve(value);
            // A lock granted after we gave up on it (a frozen Redis thawed, a command resent
            // after a reconnect): give it back, or it would hold off every instance until it expires.
            const late = value as Partial<TokenCacheLock> | undefined;
            if (operation === 'lock' && typeof late?.release === 'function') release(late as TokenCacheLock);
          },
          (error: unknown) => {
            clearTimeout(timer);
            if (settled) return;
            report(operation, 'error', error);
            resolve(FAILED);
          },
        );
      });
    }

    function checked(value: ExchangedToken | undefined | null): ExchangedToken | undefined {
      if (value === undefined || value === null) return undefined;
      const token = copyToken(value);
      if (!token) report('get', 'invalid', value);
      return token;
    }
    /** A copy of what the cache holds (undefined for none or for junk), or FAILED. */
    function readCache(key: string, ms: number): CacheRead {
      const got = callCache('get', () => cache.get(key), ms);
      return isThenable<Outcome<ExchangedToken | undefined>>(got) ? got.then((v) => (v === FAILED ? v : checked(v))) : got === FAILED ? got : checked(got);
    }

    function release(lock: TokenCacheLock): void {
      if (typeof lock.release === 'function') void callCache('release', () => lock.release(), timeout);
    }
    /** Stores the token, then lets go of the lock, in the background: callers already have it. */
    function storeThenRelease(key: string, token: ExchangedToken, lock: TokenCacheLock | undefined): void {
      const ttl = cacheTtl(token, margin);
      const stored = ttl > 0 ? callCache('set', () => cache.set(key, { ...token }, ttl), timeout) : undefined;
      if (!lock) return;
      if (isThenable(stored)) void stored.then(() => release(lock));
      else release(lock);
    }

    async function fromService(key: string, externalUserId: string, lock: TokenCacheLock | undefined): Promise<ExchangedToken> {
      let token: ExchangedToken;
      try {
        token = await request(externalUserId);
      } catch (error) {
        if (lock) release(lock);
        throw error;
      }
      storeThenRelease(key, token, lock);
      return token;
    }

    /**
     * One flight per user covers the cache read, the lock and the wait, all within `timeout` of
     * its start, then the service: a caller never waits longer than `timeout` plus the token call.
     * With a lock, one instance asks the service while the others watch the cache.
     */
    async function lookup(key: string, externalUserId: string, firstRead: CacheRead, deadline: number): Promise<ExchangedToken> {
      const cached = await firstRead;
      if (cached !== FAILED && cached && isFresh(cached, margin)) return cached;
      if (cached === FAILED || !cache.lock) return fromService(key, externalUserId, undefined);
      let pause = 10;
      for (let left = deadline - Date.now(); left > 0; left = deadline - Date.now()) {
        const lock = await callCache('lock', () => (cache.lock as NonNullable<TokenCache['lock']>)(key, lockTtl), left);
        if (lock === FAILED) break;
        if (lock) {
          // Another instance may have stored a token between our read and our lock.
          const again = await readCache(key, deadline - Date.now());
          if (again !== FAILED && again && isFresh(again, margin)) {
            release(lock);
            return again;
          }
          return fromService(key, externalUserId, lock);
        }
        await sleep(Math.max(1, Math.min(pause, deadline - Date.now())));
        pause = Math.min(pause * 2, 100);
        if (Date.now() >= deadline) break;
        const seen = await readCache(key, deadline - Date.now());
        if (seen === FAILED) break;
        if (seen && isFresh(seen, margin)) return seen;
      }
      // The holder is slow or gone, or the cache failed: ask the service ourselves.
      return fromService(key, externalUserId, undefined);
    }

    /** A forced refresh: always the service; a lock, if it can be had at once, makes other instances wait for it. */
    async function refresh(key: string, externalUserId: string): Promise<ExchangedToken> {
      let lock: TokenCacheLock | undefined;
      if (cache.lock) {
        const got = await callCache('lock', () => (cache.lock as NonNullable<TokenCache['lock']>)(key, lockTtl), timeout);
        if (got !== FAILED && got) lock = got;
      }
      return fromService(key, externalUserId, lock);
    }

    function startFlight(flights: Map<string, Promise<ExchangedToken>>, key: string, run: () => Promise<ExchangedToken>): Promise<ExchangedToken> {
      const flight = run();
      flights.set(key, flight);
      const done = () => {
        if (flights.get(key) === flight) flights.delete(key);
      };
      flight.then(done, done);
      return flight;
    }

    /** The shared flight, copied for this caller; `signal` detaches this caller only. */
    function forCaller(flight: Promise<ExchangedToken>, signal: AbortSignal | undefined): Promise<ExchangedToken> {
      if (!signal) return flight.then((token) => ({ ...token }));
      if (signal.aborted) return Promise.reject(aborted(signal));
      return new Promise<ExchangedToken>((resolve, reject) => {
        // One listener on the caller's signal however many calls share it (Node warns past 10).
        const off = onAbort(signal, () => reject(aborted(signal)));
        flight.then(
          (token) => {
            off();
            resolve({ ...token });
          },
          (error: unknown) => {
            off();
            reject(error);
          },
        );
      });
    }

    function aborted(signal: AbortSignal): TokenExchangeError {
      const reason = signal.reason as { name?: unknown } | undefined;
      const timedOut = reason?.name === 'TimeoutError';
      return new TokenExchangeError('getToken was aborted by its signal' + (timedOut ? ' (the signal timed out)' : '') + '; the token call goes on for other callers', {
        ...context,
        cause: signal.reason,
      });
    }

    async function request(externalUserId: string): Promise<ExchangedToken> {
      const body = JSON.stringify({ external_user_id: externalUserId });
      const timer = AbortSignal.timeout(timeout);
      const late = (what: string, status?: number) =>
        new TokenExchangeError('the token endpoint ' + url + ' did not ' + what + ' within ' + timeout + ' ms (timeout)', { ...context, status });
      let headers: Record<string, string>;
      try {
        headers = await raceSignal(Promise.resolve(sign({ method: 'POST', url, path, body, accessKey: o.accessKey, secretKey: o.secretKey })), timer, context, false);
      } catch (error) {
        if (timer.aborted) throw late('get a signed request (the sign function is slow)');
        throw new TokenExchangeError('the sign function failed: ' + messageOf(error), context);
      }
      let response: Response;
      try {
        response = await raceSignal(doFetch(url, { method: 'POST', headers: { ...headers, 'Content-Type': 'application/json' }, body, signal: timer }), timer, context, false);
      } catch (error) {
        if (timer.aborted) throw late('answer');
        throw new TokenExchangeError('could not reach the token endpoint ' + url + ': ' + describeUnreachable(error, url, redact), { ...context, cause: error });
      }
      let text: string;
      try {
        text = await raceSignal(response.text(), timer, context, false);
      } catch (error) {
        if (timer.aborted) throw late('send the whole body of its HTTP ' + response.status + ' answer', response.status);
        throw new TokenExchangeError("could not read the answer of the token endpoint " + url + ' (HTTP ' + response.status + '): ' + messageOf(error), { ...context, status: response.status, cause: error });
      }
      return readTokenAnswer(response.status, response.ok, text, response.headers.get('content-type'));
    }

    function readTokenAnswer(status: number, ok: boolean, text: string, contentType: string | null): ExchangedToken {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        value = undefined;
      }
      const envelope = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as { code?: unknown; message?: unknown; msg?: unknown }) : undefined;
      const apiCode = envelope && (typeof envelope.code === 'number' || typeof envelope.code === 'string') ? envelope.code : undefined;
      const said = envelope && typeof (envelope.message ?? envelope.msg) === 'string' ? redact(String(envelope.message ?? envelope.msg)).slice(0, 200) : '';
      const where = { ...context, status, apiCode };
      // Not the service's envelope at all: most likely baseUrl points at something else.
      const foreign = apiCode === undefined ? describeAnswer(text, contentType) : undefined;
      if (!ok) {
        const answered = 'the token endpoint ' + url + ' answered HTTP ' + status + (apiCode !== undefined ? ' with code ' + apiCode : '') + (said ? ': ' + said : '');
        throw new TokenExchangeError(answered + (foreign ? ' (' + foreign + ')' : '') + '. ' + describeHttpRefusal(status, said, baseUrl), where);
      }
      // "0" as well as 0, as the client entry accepts.
      if (apiCode !== undefined && apiCode !== 0 && apiCode !== '0') throw new TokenExchangeError('the token endpoint ' + url + ' answered code ' + apiCode + (said ? ': ' + said : ''), where);
      const parsed = tokenResponseSchema.safeParse(apiCode === '0' ? { ...envelope, code: 0 } : value);
      if (!parsed.success) {
        const shape = "{ code: 0, data: { access_token, expires_in, token_type: 'Bearer' } }";
        const problem = foreign
          ? "the answer of " + url + ' (HTTP ' + status + (contentType ? ', ' + contentType.slice(0, 60) : '') + ') is not the token endpoint\'s ' + shape + ': it is ' + foreign + '. ' + describeUrlMistake(baseUrl)
          : "the token endpoint " + url + " answered HTTP " + status + ' without ' + shape + ': ' + describeIssues(parsed.error.issues).join('; ');
        throw new TokenExchangeError(problem, where);
      }
      const { access_token, expires_in } = parsed.data.data;
      return { accessToken: access_token, expiresIn: expires_in, tokenType: 'Bearer', expiresAt: Date.now() + expires_in * 1000 };
    }

    return {
      getToken(externalUserId, callOptions) {
        const { forceRefresh = false, signal } = callOptions || {};
        const problem = externalUserIdProblem(externalUserId);
        if (problem) return Promise.reject(new ConfigError('externalUserId ' + problem));
        if (signal !== undefined && (typeof signal !== 'object' || signal === null || typeof signal.addEventListener !== 'function')) {
          return Promise.reject(new ConfigError('signal must be an AbortSignal; got ' + shown(signal)));
        }
        if (signal?.aborted) return Promise.reject(aborted(signal));
        const key = keyPrefix + tokenCacheKeyPart(externalUserId);
        if (forceRefresh) return forCaller(forced.get(key) || startFlight(forced, key, () => refresh(key, externalUserId)), signal);
        const joined = forced.get(key) || shared.get(key);
        if (joined) return forCaller(joined, signal);
        const started = coarseNow();
        const read = readCache(key, timeout);
        // A synchronous cache (the default) answers a hit here: no flight, no timer. What it
        // hands out is already a copy.
        if (!isThenable(read) && read !== FAILED && read && isFresh(read, margin, coarseNow())) return Promise.resolve(read);
        return forCaller(startFlight(shared, key, () => lookup(key, externalUserId, read, started + timeout)), signal);
      },
    };
  };
}
