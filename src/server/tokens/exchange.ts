import { checkKeys, describe } from '../../shared/check.js';
import { envelopeText, isEnvelope } from '../../shared/envelope.js';
import { messageIn } from '../../shared/message.js';
import { maskTokens } from '../../shared/redact.js';
import { safeReport } from '../../shared/report.js';
import { MAX_DELAY, raceSignal, sleep } from '../../shared/signal.js';
import { normalizeBaseUrl } from '../../shared/url.js';
import { ConfigError } from '../../errors/ConfigError.js';
import { TokenExchangeError } from '../../errors/TokenExchangeError.js';
import { describeIssues, tokenResponseSchema } from '../../schemas/logistics.js';
import { createCacheGuard, FAILED, type Outcome } from './cache-guard.js';
import type { SignFunction } from './signing.js';
import {
  cacheTtl,
  callerToken,
  coarseNow,
  copyToken,
  createMemoryTokenCache,
  isFresh,
  tokenCacheKey,
  tokenCacheKeyPart,
  type ExchangedToken,
  type StoredToken,
  type TokenCache,
  type TokenCacheErrorInfo,
  type TokenCacheLock,
} from './token-cache.js';
import { describeAnswer, describeHttpRefusal, describeUnreachable, describeUrlMistake } from './messages.js';

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
   * Milliseconds for the token call (signing, answer and body), and for waiting on another
   * instance that holds the cache's lock for the same user. @default 10000
   */
  timeout?: number;
  /**
   * Milliseconds each cache call (get, set, lock, release) may take. A cache that does not
   * answer in time is skipped and the service asked instead, so a frozen or unreachable Redis
   * adds at most this much to a `getToken`. @default 200
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
}

/** What {@link createTokenExchange} returns. */
export interface TokenExchange {
  /**
   * A user JWT for `externalUserId`: from the cache while it has more than `cacheMargin` left,
   * else from the service (concurrent calls for one user share one request, across instances
   * when the cache has a `lock`). `forceRefresh: true` never answers from the cache: it asks the
   * service, or shares a forced refresh of that user under way or obtained within
   * `forceRefreshWindow`; use it when the SDK's provider is called with it. `signal` lets this
   * caller stop waiting; the shared request goes on for the others. Rejects with
   * `TokenExchangeError` or `ConfigError` only.
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

const optionKeys = ['baseUrl', 'accessKey', 'secretKey', 'sign', 'fetch', 'cache', 'timeout', 'cacheTimeout', 'cacheCooldown', 'forceRefreshWindow', 'cacheMargin', 'onCacheError'];
/** A cache read: synchronous for a synchronous cache. */
type CacheRead = Outcome<StoredToken | undefined> | Promise<Outcome<StoredToken | undefined>>;

/** A thrown value in a token call's message: `TypeError: ...`. */
const named = { name: true };
const shown = (value: unknown) => (typeof value === 'number' ? String(value) : describe(value));
const isThenable = <T>(value: unknown): value is PromiseLike<T> => typeof (value as PromiseLike<T> | null)?.then === 'function';
function checkOptions(o: TokenExchangeOptions): void {
  if (typeof o !== 'object' || o === null) throw new ConfigError('createTokenExchange needs an options object: { baseUrl, accessKey, secretKey }');
  checkKeys(o, optionKeys, 'createTokenExchange option');
  if (typeof o.accessKey !== 'string' || !o.accessKey) throw new ConfigError('accessKey must be the non-empty access key from the integration configuration');
  if (typeof o.secretKey !== 'string' || !o.secretKey) throw new ConfigError('secretKey must be the non-empty secret key from the integration configuration');
  const ms = [
    ['timeout', 1, 10000],
    ['cacheTimeout', 1, 200],
    ['cacheCooldown', 0, 5000],
    ['forceRefreshWindow', 0, 5000],
  ] as const;
  for (const [name, min, example] of ms) {
    const value = o[name];
    if (value !== undefined && !(typeof value === 'number' && value >= min && value <= MAX_DELAY)) {
      throw new ConfigError(name + ' must be a number of milliseconds from ' + min + ' to ' + MAX_DELAY + ' (e.g. ' + example + '); got ' + shown(value));
    }
  }
  if (o.cacheMargin !== undefined && !(typeof o.cacheMargin === 'number' && o.cacheMargin >= 0 && o.cacheMargin <= MAX_DELAY / 1000)) {
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

/** The token exchange, signing with `defaultSign` unless told otherwise (what `createTokenExchange` runs). */
export function createExchange(defaultSign: SignFunction, options: TokenExchangeOptions): TokenExchange {
  checkOptions(options);
  const o = options;
  const baseUrl = normalizeBaseUrl(o.baseUrl);
  const url = baseUrl + TOKEN_PATH;
  const path = url.replace(/^https?:\/\/[^/]+/i, '');
  const sign = o.sign || defaultSign;
  const doFetch = o.fetch || ((input, init) => fetch(input, init));
  const cache = o.cache || createMemoryTokenCache();
  // While a shared cache is skipped or failing, tokens are kept here so that each user still
  // costs one token call, not one per getToken. Never read while the shared cache answers.
  const fallback = o.cache ? createMemoryTokenCache() : undefined;
  const timeout = o.timeout ?? 10000;
  const cacheTimeout = o.cacheTimeout ?? 200;
  const window = o.forceRefreshWindow ?? 5000;
  const margin = (o.cacheMargin ?? 60) * 1000;
  // The holder of a cross-instance lock calls the service (bounded by `timeout`), stores the
  // token and lets go; a holder that died lets go when the lock expires.
  const lockTtl = Math.min(timeout + 1000, MAX_DELAY);
  let warned = false;
  const onCacheError =
    o.onCacheError ||
    ((info: TokenCacheErrorInfo) => {
      if (warned) return;
      warned = true;
      const skipping = info.skipMs > 0 ? ', and skipping the cache for ' + info.skipMs + ' ms' : '';
      console.warn('[channel-sdk] token cache ' + info.operation + ' failed (' + info.message + '); asking the token endpoint instead' + skipping + '. Pass onCacheError to handle this yourself; this warning is shown once.');
    });
  // Flights per cache key: `shared` may end with a token another instance stored, `forced`
  // only with one from a forced refresh (a forced caller joins only those).
  const shared = new Map<string, Promise<StoredToken>>();
  const forced = new Map<string, Promise<StoredToken>>();
  const context = { method: 'POST', url };
  const keyPrefix = tokenCacheKey(baseUrl, o.accessKey, '');

  /** Cuts the secret key and anything JWT-shaped out of text that goes into an error or report. */
  function redact(text: string): string {
    return maskTokens(text.split(o.secretKey).join('[secret]'));
  }
  const thrown = (error: unknown) => redact(messageIn(named, error)).slice(0, 300);

  // A throwing hook must not turn a working fallback into a failure.
  const tell = safeReport(onCacheError);
  function report(operation: TokenCacheErrorInfo['operation'], reason: TokenCacheErrorInfo['reason'], error: unknown, skipMs: number) {
    const message =
      reason === 'timeout' ? 'no answer within ' + cacheTimeout + ' ms' : reason === 'invalid' ? 'the cache returned ' + describe(error) + ', not a token' : thrown(error);
    tell({ operation, reason, message, skipMs });
  }

  const guard = createCacheGuard({ timeoutMs: cacheTimeout, cooldownMs: o.cacheCooldown ?? 5000, report, lateLock: (lock) => release(lock) });

  function checked(value: StoredToken | undefined | null): StoredToken | undefined {
    if (value === undefined || value === null) return undefined;
    const token = copyToken(value);
    if (!token) report('get', 'invalid', value, 0);
    return token;
  }
  /** A copy of what the cache holds (undefined for none or for junk), or FAILED. */
  function readCache(key: string): CacheRead {
    const got = guard.call('get', () => cache.get(key));
    return isThenable<Outcome<StoredToken | undefined>>(got) ? got.then((v) => (v === FAILED ? v : checked(v))) : got === FAILED ? got : checked(got);
  }
  /** What this process kept while the shared cache failed. */
  const fromFallback = (key: string): StoredToken | undefined => (fallback ? copyToken(fallback.get(key)) : undefined);

  function release(lock: TokenCacheLock): void {
    if (typeof lock.release === 'function') void guard.call('release', () => lock.release(), true);
  }
  /** Stores the token, then lets go of the lock, in the background: callers already have it. */
  function storeThenRelease(key: string, token: StoredToken, lock: TokenCacheLock | undefined): void {
    const ttl = cacheTtl(token, margin);
    const keep = () => fallback?.set(key, token, ttl);
    const stored = ttl > 0 ? guard.call('set', () => cache.set(key, { ...token }, ttl)) : undefined;
    if (stored === FAILED) keep();
    if (isThenable<Outcome<void>>(stored)) {
      void stored.then((outcome) => {
        if (outcome === FAILED) keep();
        if (lock) release(lock);
      });
    } else if (lock) release(lock);
  }

  async function fromService(key: string, externalUserId: string, lock: TokenCacheLock | undefined, force: boolean): Promise<StoredToken> {
    let token: StoredToken;
    try {
      token = await request(externalUserId);
    } catch (error) {
      if (lock) release(lock);
      throw error;
    }
    if (force) token.forcedAt = Date.now();
    storeThenRelease(key, token, lock);
    return token;
  }

  /** True for a token a forced caller may have: one that a forced refresh obtained within the window (clocks of instances may differ a little: either way). */
  const forcedRecently = (token: StoredToken) => token.forcedAt !== undefined && Math.abs(Date.now() - token.forcedAt) < window && isFresh(token, margin);
  const fresh = (token: StoredToken) => isFresh(token, margin);

  /**
   * One flight per user covers the cache read, the lock and the wait, all within `timeout` of
   * its start, then the service: a caller never waits longer than `timeout` plus the token call.
   * With a lock, one instance asks the service while the others watch the cache. When the
   * cache fails, or is being skipped, the service is asked at once (or this process's
   * fallback answers).
   */
  async function lookup(key: string, externalUserId: string, firstRead: CacheRead, deadline: number, force: boolean): Promise<StoredToken> {
    const accept = force ? forcedRecently : fresh;
    const ourselves = (lock?: TokenCacheLock) => fromService(key, externalUserId, lock, force);
    const cached = await firstRead;
    if (cached !== FAILED && cached && accept(cached)) return cached;
    if (cached === FAILED) {
      const kept = fromFallback(key);
      return kept && accept(kept) ? kept : ourselves();
    }
    if (!cache.lock) return ourselves();
    let pause = 10;
    for (let left = deadline - Date.now(); left > 0; left = deadline - Date.now()) {
      const lock = await guard.call('lock', () => (cache.lock as NonNullable<TokenCache['lock']>)(key, lockTtl));
      if (lock === FAILED) break;
      if (lock) {
        // Another instance may have stored a token between our read and our lock.
        const again = await readCache(key);
        if (again !== FAILED && again && accept(again)) {
          release(lock);
          return again;
        }
        return ourselves(lock);
      }
      await sleep(Math.max(1, Math.min(pause, deadline - Date.now())));
      pause = Math.min(pause * 2, 100);
      if (Date.now() >= deadline) break;
      const seen = await readCache(key);
      if (seen === FAILED) break;
      if (seen && accept(seen)) return seen;
    }
    // The holder is slow or gone, or the cache failed: ask the service ourselves.
    return ourselves();
  }

  /** A forced refresh with `forceRefreshWindow: 0`: always the service; a lock, if it can be had at once, makes other instances wait for it. */
  async function refreshAlone(key: string, externalUserId: string): Promise<StoredToken> {
    let lock: TokenCacheLock | undefined;
    if (cache.lock) {
      const got = await guard.call('lock', () => (cache.lock as NonNullable<TokenCache['lock']>)(key, lockTtl));
      if (got !== FAILED && got) lock = got;
    }
    return fromService(key, externalUserId, lock, true);
  }

  function startFlight(flights: Map<string, Promise<StoredToken>>, key: string, run: () => Promise<StoredToken>): Promise<StoredToken> {
    const flight = run();
    flights.set(key, flight);
    const done = () => {
      if (flights.get(key) === flight) flights.delete(key);
    };
    flight.then(done, done);
    return flight;
  }

  /** The shared flight, copied for this caller; `signal` detaches this caller only. */
  function forCaller(flight: Promise<StoredToken>, signal: AbortSignal | undefined): Promise<ExchangedToken> {
    // One listener on the caller's signal however many calls share it (Node warns past 10).
    return (signal ? raceSignal(flight, signal, () => aborted(signal)) : flight).then(callerToken);
  }

  function aborted(signal: AbortSignal): TokenExchangeError {
    const reason = signal.reason as { name?: unknown } | undefined;
    const timedOut = reason?.name === 'TimeoutError';
    return new TokenExchangeError('getToken was aborted by its signal' + (timedOut ? ' (the signal timed out)' : '') + '; the token call goes on for other callers', {
      ...context,
      cause: signal.reason,
    });
  }

  async function request(externalUserId: string): Promise<StoredToken> {
    const body = JSON.stringify({ external_user_id: externalUserId });
    const timer = AbortSignal.timeout(timeout);
    const late = (what: string, status?: number) =>
      new TokenExchangeError('the token endpoint ' + url + ' did not ' + what + ' within ' + timeout + ' ms (timeout)', { ...context, status });
    // Only ever read as `timer.aborted` below.
    const stopped = () => new Error('timeout');
    let headers: Record<string, string>;
    try {
      headers = await raceSignal(Promise.resolve(sign({ method: 'POST', url, path, body, accessKey: o.accessKey, secretKey: o.secretKey })), timer, stopped, false);
    } catch (error) {
      if (timer.aborted) throw late('get a signed request (the sign function is slow)');
      throw new TokenExchangeError('the sign function failed: ' + thrown(error), context);
    }
    let response: Response;
    try {
      response = await raceSignal(doFetch(url, { method: 'POST', headers: { ...headers, 'Content-Type': 'application/json' }, body, signal: timer }), timer, stopped, false);
    } catch (error) {
      if (timer.aborted) throw late('answer');
      throw new TokenExchangeError('could not reach the token endpoint ' + url + ': ' + describeUnreachable(error, url, redact), { ...context, cause: error });
    }
    let text: string;
    try {
      text = await raceSignal(response.text(), timer, stopped, false);
    } catch (error) {
      if (timer.aborted) throw late('send the whole body of its HTTP ' + response.status + ' answer', response.status);
      throw new TokenExchangeError("could not read the answer of the token endpoint " + url + ' (HTTP ' + response.status + '): ' + thrown(error), { ...context, status: response.status, cause: error });
    }
    return readTokenAnswer(response.status, response.ok, text, response.headers.get('content-type'));
  }

  function readTokenAnswer(status: number, ok: boolean, text: string, contentType: string | null): StoredToken {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      value = undefined;
    }
    const apiCode = isEnvelope(value) && (typeof value.code === 'number' || typeof value.code === 'string') ? value.code : undefined;
    const said = redact(envelopeText(value)).slice(0, 200);
    const where = { ...context, status, apiCode };
    // Not the service's envelope at all: most likely baseUrl points at something else.
    const foreign = apiCode === undefined ? describeAnswer(text, contentType) : undefined;
    if (!ok) {
      const answered = 'the token endpoint ' + url + ' answered HTTP ' + status + (apiCode !== undefined ? ' with code ' + apiCode : '') + (said ? ': ' + said : '');
      throw new TokenExchangeError(answered + (foreign ? ' (' + foreign + ')' : '') + '. ' + describeHttpRefusal(status, said, baseUrl), where);
    }
    // "0" as well as 0, as the client entry accepts.
    if (apiCode !== undefined && apiCode !== 0 && apiCode !== '0') throw new TokenExchangeError('the token endpoint ' + url + ' answered code ' + apiCode + (said ? ': ' + said : ''), where);
    const parsed = tokenResponseSchema.safeParse(apiCode === '0' ? { ...(value as object), code: 0 } : value);
    if (!parsed.success) {
      const shape = "{ code: 0, data: { access_token, expires_in, token_type: 'Bearer' } }";
      const problem = foreign
        ? "the answer of " + url + ' (HTTP ' + status + (contentType ? ', ' + contentType.slice(0, 60) : '') + ') is not the token endpoint\'s ' + shape + ': it is ' + foreign + '. ' + describeUrlMistake(baseUrl) + '.'
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
      if (forceRefresh) {
        const joined = forced.get(key);
        if (joined) return forCaller(joined, signal);
        const started = Date.now();
        // Without a window, a forced refresh never reads the cache; it takes the lock only if free.
        const read: CacheRead = window > 0 ? readCache(key) : undefined;
        if (window > 0 && !isThenable(read) && read !== FAILED && read && forcedRecently(read)) return Promise.resolve(callerToken(read));
        const run = window > 0 ? () => lookup(key, externalUserId, read, started + timeout, true) : () => refreshAlone(key, externalUserId);
        return forCaller(startFlight(forced, key, run), signal);
      }
      const joined = forced.get(key) || shared.get(key);
      if (joined) return forCaller(joined, signal);
      const started = coarseNow();
      const read = readCache(key);
      // A synchronous cache (the default) answers a hit here: no flight, no timer. What it
      // hands out is already a copy (one without forcedAt is the caller's as it is).
      if (!isThenable(read) && read !== FAILED && read && isFresh(read, margin, coarseNow())) return Promise.resolve(read.forcedAt === undefined ? read : callerToken(read));
      return forCaller(startFlight(shared, key, () => lookup(key, externalUserId, read, started + timeout, false)), signal);
    },
  };
}
