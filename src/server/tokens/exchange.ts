// The token exchange's flights and cache: one call per user at a time (across instances with a
// cache lock), tokens from the cache while fresh, the cache skipped while it fails. The call
// itself is in token-request.ts, the options in exchange-options.ts.
import { isThenable } from '../../shared/bounded.js';
import { tokenFingerprint } from '../../shared/fingerprint.js';
import { raceSignal, sleep } from '../../shared/signal.js';
import { normalizeBaseUrl } from '../../shared/url.js';
import { ConfigError } from '../../errors/ConfigError.js';
import { TokenExchangeError } from '../../errors/TokenExchangeError.js';
import { checkOptions, externalUserIdProblem, shown, TOKEN_PATH, userIdKeyProblem, type TokenExchange, type TokenExchangeOptions } from './exchange-options.js';
import { createCacheGuard, FAILED, type Outcome } from './cache-guard.js';
import { createCacheReporter } from './cache-reports.js';
import { exchangeTelemetry, type CallNote } from '../telemetry/exchange-telemetry.js';
import { keepLease, lockLeaseMs, lockWaitMs } from './lock-lease.js';
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
  type CachedToken,
  type TokenCache,
  type TokenCacheLock,
} from './token-cache.js';
import { redactorFor, requestToken, thrownMessage, type TokenCall } from './token-request.js';

/** A cache read: synchronous for a synchronous cache. */
type CacheRead = Outcome<CachedToken | undefined> | Promise<Outcome<CachedToken | undefined>>;

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
  // The holder of a cross-instance lock calls the service (bounded by `timeout`), renewing its
  // short lease meanwhile, stores the token and lets go; a holder that died lets go when its
  // lease lapses. Others wait for its token up to `lockWait`, then ask the service themselves.
  const lease = lockLeaseMs(cacheTimeout);
  const lockWait = lockWaitMs(timeout, lease);
  // Flights per cache key: `shared` may end with a token another instance stored, `forced`
  // only with one from a forced refresh (a forced caller joins only those).
  const shared = new Map<string, Promise<CachedToken>>();
  const forced = new Map<string, Promise<CachedToken>>();
  const context = { method: 'POST', url };
  const keyPrefix = tokenCacheKey(baseUrl, o.accessKey, '');
  // Spans and metrics only with `telemetry`: without it, getToken is the plain function below.
  const telemetry = exchangeTelemetry(o.telemetry, url);
  const notes = telemetry && new WeakMap<Promise<CachedToken>, CallNote>();

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
    telemetry,
  };

  const cooldown = o.cacheCooldown ?? 5000;
  const { report, overran } = createCacheReporter({ onCacheError: o.onCacheError, cacheTimeout, cooldown, thrown: (error) => thrownMessage(call, error) });

  const guard = createCacheGuard({
    timeoutMs: cacheTimeout,
    cooldownMs: cooldown,
    report,
    overran,
    lateLock: (lock) => release(lock),
    connecting: typeof cache.connecting === 'function' ? () => (cache.connecting as () => unknown).call(cache) : undefined,
  });

  function checked(value: CachedToken | undefined | null): CachedToken | undefined {
    if (value === undefined || value === null) return undefined;
    const token = copyToken(value);
    if (!token) report('get', 'invalid', value, 0);
    return token;
  }
  /** A copy of what the cache holds (undefined for none or for junk), or FAILED; `until`: the caller's budget. */
  function readCache(key: string, until?: number): CacheRead {
    const got = guard.call('get', () => cache.get(key), { until });
    return isThenable<Outcome<CachedToken | undefined>>(got) ? got.then((v) => (v === FAILED ? v : checked(v))) : got === FAILED ? got : checked(got);
  }
  /** What this process kept while the shared cache failed. */
  const fromFallback = (key: string): CachedToken | undefined => (fallback ? copyToken(fallback.get(key)) : undefined);

  function release(lock: TokenCacheLock): void {
    if (typeof lock.release === 'function') void guard.call('release', () => lock.release(), { always: true });
  }
  /** The cache's lock on `key` for one lease: the lock, undefined when another holds it, or FAILED. */
  const takeLock = (key: string, until?: number) => guard.call('lock', () => (cache.lock as NonNullable<TokenCache['lock']>)(key, lease), { until });
  const renew = (lock: Required<Pick<TokenCacheLock, 'renew'>>) => guard.call('renew', () => lock.renew(lease), { always: true });
  /** Stores the token, then lets go of the lock, in the background: callers already have it. */
  function storeThenRelease(key: string, token: CachedToken, lock: TokenCacheLock | undefined): void {
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

  async function fromService(key: string, externalUserId: string, lock: TokenCacheLock | undefined, force: boolean): Promise<CachedToken> {
    let token: CachedToken;
    const stopRenewing = lock ? keepLease(lock, lease, renew) : undefined;
    try {
      token = await requestToken(call, externalUserId);
    } catch (error) {
      stopRenewing?.();
      if (lock) release(lock);
      throw error;
    }
    stopRenewing?.();
    if (force) token.forcedAt = Date.now();
    storeThenRelease(key, token, lock);
    return token;
  }

  /** True for a token a forced caller may have: one that a forced refresh obtained within the window (clocks of instances may differ a little: either way). */
  const forcedRecently = (token: CachedToken) => token.forcedAt !== undefined && Math.abs(Date.now() - token.forcedAt) < window && isFresh(token, margin);
  const fresh = (token: CachedToken) => isFresh(token, margin);

  /**
   * One flight per user: the cache read, the lock and a re-read share one budget, `cacheTimeout`
   * from `started`; past it, the service is asked without the rest. With a lock, one instance
   * asks the service while the others watch the cache, up to `lockWait`, while its lease lives.
   * When the cache fails, or is being skipped, the service is asked at once (or this process's
   * fallback answers).
   */
  async function lookup(
    key: string,
    externalUserId: string,
    firstRead: CacheRead,
    started: number,
    force: boolean,
    accept: (token: CachedToken) => boolean,
    note?: CallNote,
  ): Promise<CachedToken> {
    const ourselves = (lock?: TokenCacheLock) => fromService(key, externalUserId, lock, force);
    const budget = started + cacheTimeout;
    const cached = await firstRead;
    if (note && !force) note.cache = cached === FAILED ? 'bypass' : cached && accept(cached) ? 'hit' : 'miss';
    if (cached !== FAILED && cached && accept(cached)) return cached;
    if (cached === FAILED) {
      const kept = fromFallback(key);
      return kept && accept(kept) ? kept : ourselves();
    }
    if (!cache.lock) return ourselves();
    let lock = await takeLock(key, budget);
    const waited = lock === undefined;
    const waiting = waited && telemetry ? telemetry.lockWait() : undefined;
    // Another instance holds the lock: wait for its token (or for its lease to lapse).
    const until = Date.now() + lockWait;
    for (let pause = 10; lock === undefined && Date.now() < until; pause = Math.min(pause * 2, 100)) {
      await sleep(Math.max(1, Math.min(pause, until - Date.now())));
      const seen = await readCache(key);
      if (seen === FAILED) break;
      if (seen && accept(seen)) return (waiting?.('token'), seen);
      lock = await takeLock(key);
    }
    waiting?.(lock === FAILED ? 'failed' : lock ? 'acquired' : Date.now() < until ? 'failed' : 'timeout');
    if (!lock || lock === FAILED) return ourselves(); // the cache failed, or the holder is slow
    // Another instance may have stored a token between our read and our lock.
    const again = await readCache(key, waited ? undefined : budget);
    if (again !== FAILED && again && accept(again)) {
      release(lock);
      return again;
    }
    return ourselves(lock);
  }

  /** A forced refresh with `forceRefreshWindow: 0`: always the service; a lock, if it can be had at once, makes other instances wait for it. */
  async function refreshAlone(key: string, externalUserId: string): Promise<CachedToken> {
    let lock: TokenCacheLock | undefined;
    if (cache.lock) {
      const got = await takeLock(key, Date.now() + cacheTimeout);
      if (got !== FAILED && got) lock = got;
    }
    return fromService(key, externalUserId, lock, true);
  }

  function startFlight(flights: Map<string, Promise<CachedToken>>, key: string, run: () => Promise<CachedToken>, note?: CallNote): Promise<CachedToken> {
    const flight = run();
    flights.set(key, flight);
    if (note) notes?.set(flight, note);
    const done = () => {
      if (flights.get(key) === flight) flights.delete(key);
    };
    flight.then(done, done);
    return flight;
  }

  /** The shared flight, copied for this caller; `signal` detaches this caller only. */
  function forCaller(flight: Promise<CachedToken>, signal: AbortSignal | undefined): Promise<ExchangedToken> {
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

  const getToken: (...args: [...Parameters<TokenExchange['getToken']>, CallNote?]) => Promise<ExchangedToken> = (externalUserId, callOptions, note) => {
    const { forceRefresh = false, signal, rejected } = callOptions || {};
    const problem = externalUserIdProblem(externalUserId) ?? userIdKeyProblem(externalUserId as string);
    if (problem) return Promise.reject(new ConfigError('externalUserId ' + problem));
    if (signal !== undefined && (typeof signal !== 'object' || signal === null || typeof signal.addEventListener !== 'function')) {
      return Promise.reject(new ConfigError('signal must be an AbortSignal; got ' + shown(signal)));
    }
    if (signal?.aborted) return Promise.reject(aborted(signal));
    const key = keyPrefix + tokenCacheKeyPart(externalUserId);
    // While the cache's client makes its first connection, the flight waits for it first.
    const connecting = guard.connected();
    if (forceRefresh) {
      if (note) note.cache = 'bypass';
      // A token the window would share, unless it is the one the caller's 401 just rejected.
      const accept = (token: CachedToken) => forcedRecently(token) && tokenFingerprint(token.accessToken) !== rejected;
      const own = (): Promise<ExchangedToken> => {
        // Without a window, a forced refresh never reads the cache; it takes the lock only if free.
        const start = (): Promise<CachedToken> =>
          window === 0 ? refreshAlone(key, externalUserId) : lookup(key, externalUserId, readCache(key), Date.now(), true, accept);
        if (connecting)
          return forCaller(
            startFlight(forced, key, () => connecting.then(start), note),
            signal,
          );
        const started = Date.now();
        const read: CacheRead = window > 0 ? readCache(key) : undefined;
        if (window > 0 && !isThenable(read) && read !== FAILED && read && accept(read)) return Promise.resolve(callerToken(read));
        const run = window > 0 ? () => lookup(key, externalUserId, read, started, true, accept) : () => refreshAlone(key, externalUserId);
        return forCaller(startFlight(forced, key, run, note), signal);
      };
      const joined = forced.get(key);
      if (!joined) return own();
      if (note) note.joined = notes?.get(joined);
      // A flight under way may end with the rejected token (read from the cache): then one of our own.
      const joinedToken = forCaller(joined, signal);
      return rejected ? joinedToken.then((token) => (tokenFingerprint(token.accessToken) === rejected ? own() : token)) : joinedToken;
    }
    const joined = forced.get(key) || shared.get(key);
    if (joined) {
      if (note) note.joined = notes?.get(joined);
      return forCaller(joined, signal);
    }
    if (connecting) {
      const run = () => connecting.then(() => lookup(key, externalUserId, readCache(key), Date.now(), false, fresh, note));
      return forCaller(startFlight(shared, key, run, note), signal);
    }
    const read = readCache(key);
    // A synchronous cache (the default) answers a hit here: no flight, no timer. What it
    // hands out is already a copy (one without forcedAt is the caller's as it is).
    if (!isThenable(read) && read !== FAILED && read && isFresh(read, margin, coarseNow())) {
      if (note) note.cache = 'hit';
      return Promise.resolve(read.forcedAt === undefined ? read : callerToken(read));
    }
    return forCaller(
      startFlight(shared, key, () => lookup(key, externalUserId, read, Date.now(), false, fresh, note), note),
      signal,
    );
  };
  return {
    getToken: telemetry
      ? (externalUserId, callOptions) => telemetry.call(Boolean(callOptions?.forceRefresh), (note) => getToken(externalUserId, callOptions, note))
      : getToken,
  };
}
