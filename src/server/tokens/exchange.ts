// The token exchange's flights and cache: one call per user at a time (across instances with a
// cache lock), tokens from the cache while fresh, the cache skipped while it fails. The call
// itself is in token-request.ts, the options in exchange-options.ts.
import { tokenFingerprint } from '../../shared/fingerprint.js';
import { isThenable } from '../../shared/bounded.js';
import { describeValue } from '../../shared/check.js';
import { safeReport } from '../../shared/report.js';
import { MAX_DELAY, raceSignal, sleep } from '../../shared/signal.js';
import { normalizeBaseUrl } from '../../shared/url.js';
import { ConfigError } from '../../errors/ConfigError.js';
import { TokenExchangeError } from '../../errors/TokenExchangeError.js';
import { checkOptions, externalUserIdProblem, shown, TOKEN_PATH, type TokenExchange, type TokenExchangeOptions } from './exchange-options.js';
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
import { redactorFor, requestToken, thrownMessage, type TokenCall } from './token-request.js';

/** A cache read: synchronous for a synchronous cache. */
type CacheRead = Outcome<StoredToken | undefined> | Promise<Outcome<StoredToken | undefined>>;

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
      console.warn(
        '[channel-sdk] token cache ' +
          info.operation +
          ' failed (' +
          info.message +
          '); asking the token endpoint instead' +
          skipping +
          '. Pass onCacheError to handle this yourself; this warning is shown once.',
      );
    });
  // Flights per cache key: `shared` may end with a token another instance stored, `forced`
  // only with one from a forced refresh (a forced caller joins only those).
  const shared = new Map<string, Promise<StoredToken>>();
  const forced = new Map<string, Promise<StoredToken>>();
  const context = { method: 'POST', url };
  const keyPrefix = tokenCacheKey(baseUrl, o.accessKey, '');

  const call: TokenCall = {
    baseUrl,
    url,
    path,
    accessKey: o.accessKey,
    secretKey: o.secretKey,
    sign,
    fetch: doFetch,
    timeout,
    context,
    redact: redactorFor(o.secretKey),
  };

  // A throwing hook must not turn a working fallback into a failure.
  const tell = safeReport(onCacheError);
  function report(operation: TokenCacheErrorInfo['operation'], reason: TokenCacheErrorInfo['reason'], error: unknown, skipMs: number) {
    const message =
      reason === 'timeout'
        ? 'no answer within ' + cacheTimeout + ' ms'
        : reason === 'invalid'
          ? 'the cache returned ' + describeValue(error) + ', not a token'
          : thrownMessage(call, error);
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
      token = await requestToken(call, externalUserId);
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
  async function lookup(
    key: string,
    externalUserId: string,
    firstRead: CacheRead,
    deadline: number,
    force: boolean,
    accept: (token: StoredToken) => boolean,
  ): Promise<StoredToken> {
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
    return new TokenExchangeError(
      'getToken was aborted by its signal' + (timedOut ? ' (the signal timed out)' : '') + '; the token call goes on for other callers',
      {
        ...context,
        cause: signal.reason,
      },
    );
  }

  return {
    getToken(externalUserId, callOptions) {
      const { forceRefresh = false, signal, rejected } = callOptions || {};
      const problem = externalUserIdProblem(externalUserId);
      if (problem) return Promise.reject(new ConfigError('externalUserId ' + problem));
      if (signal !== undefined && (typeof signal !== 'object' || signal === null || typeof signal.addEventListener !== 'function')) {
        return Promise.reject(new ConfigError('signal must be an AbortSignal; got ' + shown(signal)));
      }
      if (signal?.aborted) return Promise.reject(aborted(signal));
      const key = keyPrefix + tokenCacheKeyPart(externalUserId);
      if (forceRefresh) {
        // A token the window would share, unless it is the one the caller's 401 just rejected.
        const accept = (token: StoredToken) => forcedRecently(token) && tokenFingerprint(token.accessToken) !== rejected;
        const own = (): Promise<ExchangedToken> => {
          const started = Date.now();
          // Without a window, a forced refresh never reads the cache; it takes the lock only if free.
          const read: CacheRead = window > 0 ? readCache(key) : undefined;
          if (window > 0 && !isThenable(read) && read !== FAILED && read && accept(read)) return Promise.resolve(callerToken(read));
          const run = window > 0 ? () => lookup(key, externalUserId, read, started + timeout, true, accept) : () => refreshAlone(key, externalUserId);
          return forCaller(startFlight(forced, key, run), signal);
        };
        const joined = forced.get(key);
        if (!joined) return own();
        // A flight under way may end with the rejected token (read from the cache): then one of our own.
        const joinedToken = forCaller(joined, signal);
        return rejected ? joinedToken.then((token) => (tokenFingerprint(token.accessToken) === rejected ? own() : token)) : joinedToken;
      }
      const joined = forced.get(key) || shared.get(key);
      if (joined) return forCaller(joined, signal);
      const started = coarseNow();
      const read = readCache(key);
      // A synchronous cache (the default) answers a hit here: no flight, no timer. What it
      // hands out is already a copy (one without forcedAt is the caller's as it is).
      if (!isThenable(read) && read !== FAILED && read && isFresh(read, margin, coarseNow()))
        return Promise.resolve(read.forcedAt === undefined ? read : callerToken(read));
      return forCaller(
        startFlight(shared, key, () => lookup(key, externalUserId, read, started + timeout, false, fresh)),
        signal,
      );
    },
  };
}
