// The token cache's contract (what users implement for their own store), the rules the
// exchange applies to what a cache holds, and the default in-memory cache.
import { checkKeys, describeValue, fail, wholeNumber } from '../../shared/check.js';

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

/** What {@link TokenCache.lock} hands to the caller that got the lock. */
export interface TokenCacheLock {
  /** Gives the lock back (only if this caller still holds it). */
  release(): void | Promise<void>;
  /**
   * Optional: makes the lock last `ttlMs` more from now, if this caller still holds it (true),
   * else false. The exchange renews its lock every third of its lease while its token call
   * runs; a lock without `renew` lapses after the `ttlMs` it was taken for, even mid-call (then
   * another instance may call the service for that user too: both tokens are valid).
   */
  renew?(ttlMs: number): boolean | Promise<boolean>;
}

/** A token as the exchange stores it in a cache: the token, and when a forced refresh obtained it. */
export interface CachedToken extends ExchangedToken {
  /**
   * Epoch ms at which a forced refresh obtained this token (absent for any other). Within the
   * exchange's `forceRefreshWindow` of it, further forced refreshes of that user, on any
   * instance sharing the cache, answer with this token instead of calling the service again.
   */
  forcedAt?: number;
}

/**
 * Where tokens are cached, per user. The default is in memory; pass one backed by Redis or
 * similar to share tokens between backend instances (`createRedisTokenCache` is ready-made).
 * Values are plain JSON-safe objects: store each one whole (`forcedAt` included). Each call is
 * bounded by the exchange's `cacheTimeout`, and so are the calls of one `getToken` together; a
 * call that throws, rejects or hangs makes the exchange ask the service instead, and skip the
 * cache for `cacheCooldown`.
 * @example
 * const cache: TokenCache = {
 *   get: async (key) => JSON.parse((await redis.get(key)) ?? 'null') ?? undefined,
 *   set: async (key, value, ttlMs) => void (await redis.set(key, JSON.stringify(value), 'PX', ttlMs)),
 * };
 */
export interface TokenCache {
  /** The token stored under `key`, or undefined. */
  get(key: string): CachedToken | undefined | Promise<CachedToken | undefined>;
  /** Keep `value` for `ttlMs` milliseconds: a whole number, always at least 1. */
  set(key: string, value: CachedToken, ttlMs: number): void | Promise<void>;
  /**
   * Optional: single flight across instances. Takes a short lock on `key` that expires by
   * itself after `ttlMs` (a lease of 3 s, renewed through the lock's `renew` while the holder's
   * token call runs), and resolves to it, or to `undefined` when another caller holds it.
   * The exchange calls the service only while holding the lock; without it, it re-reads the
   * cache until the holder's token appears or its lock lapses, and calls the service itself
   * after 5 s, or at once when the cache stops answering.
   */
  lock?(key: string, ttlMs: number): TokenCacheLock | undefined | Promise<TokenCacheLock | undefined>;
  /**
   * Optional: while the cache's client is still making its first connection (a process that
   * serves requests before its Redis client is ready, e.g. an ioredis Cluster discovering its
   * slots), a promise that settles once it is connected or has given up; else undefined. The
   * exchange's calls wait for it, once, up to 2 s from the first call that found it connecting,
   * instead of counting it against `cacheTimeout`: a client still connecting is not a frozen
   * Redis. `createRedisTokenCache` implements it for ioredis.
   */
  connecting?(): PromiseLike<void> | undefined;
}

/** What `onCacheError` receives. Never holds a token or a secret. */
export interface TokenCacheErrorInfo {
  /** The cache call that failed (`renew`: a lock's renewal while its token call ran). */
  operation: 'get' | 'set' | 'lock' | 'renew' | 'release';
  /**
   * `timeout`: no answer within `cacheTimeout`, or (with `skipMs` 0) the cache calls of one
   * `getToken` took `cacheTimeout` in all, so it asked the service without the rest; `error`: it
   * threw or rejected; `invalid`: `get` gave something that is not a token.
   */
  reason: 'timeout' | 'error' | 'invalid';
  /** What went wrong, with any token cut out. */
  message: string;
  /**
   * Milliseconds for which the exchange now goes without the cache (`cacheCooldown`) before it
   * tries it again; 0 when it keeps using it (`invalid`, or `cacheCooldown: 0`).
   */
  skipMs: number;
}

/** One part of a cache key, with `%` and `:` escaped (most ids have neither: no copy then). */
export function tokenCacheKeyPart(part: string): string {
  return part.indexOf(':') < 0 && part.indexOf('%') < 0 ? part : part.replace(/[%:]/g, (c) => (c === '%' ? '%25' : '%3A'));
}

/**
 * The cache key of one user: base URL, access key and user id, each with `%` and `:` escaped,
 * joined by `:`. Distinct for every distinct triple, so one cache can serve several services
 * (staging, production) and several access keys.
 */
export function tokenCacheKey(baseUrl: string, accessKey: string, externalUserId: string): string {
  return tokenCacheKeyPart(baseUrl) + ':' + tokenCacheKeyPart(accessKey) + ':' + tokenCacheKeyPart(externalUserId);
}

/** A fresh copy of `value` when it is shaped like a token (with its `forcedAt`, if any), else undefined. */
export function copyToken(value: unknown): CachedToken | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { accessToken, expiresIn, expiresAt, forcedAt } = value as Record<string, unknown>;
  if (
    typeof accessToken !== 'string' ||
    !accessToken ||
    typeof expiresIn !== 'number' ||
    !(expiresIn > 0) ||
    typeof expiresAt !== 'number' ||
    !Number.isFinite(expiresAt)
  )
    return undefined;
  const token: CachedToken = { accessToken, expiresIn, tokenType: 'Bearer', expiresAt };
  if (typeof forcedAt === 'number' && Number.isFinite(forcedAt)) token.forcedAt = forcedAt;
  return token;
}

/** What a caller gets: the token's four fields, never `forcedAt`. */
export const callerToken = (t: ExchangedToken): ExchangedToken => ({
  accessToken: t.accessToken,
  expiresIn: t.expiresIn,
  tokenType: 'Bearer',
  expiresAt: t.expiresAt,
});

/**
 * How long before expiry a token stops being handed out: `marginMs`, or half its lifetime when
 * that is shorter, so that a token shorter than twice the margin is still shared for half its life.
 */
export function handOutMargin(token: ExchangedToken, marginMs: number): number {
  return Math.min(marginMs, token.expiresIn * 500);
}

/** True while `token` may be handed out. */
export function isFresh(token: ExchangedToken, marginMs: number, now = Date.now()): boolean {
  return token.expiresAt - now > handOutMargin(token, marginMs);
}

/** Whole milliseconds to keep `token` in a cache; 0 when it should not be stored at all. */
export function cacheTtl(token: ExchangedToken, marginMs: number, now = Date.now()): number {
  const ttl = Math.floor(token.expiresAt - now - handOutMargin(token, marginMs));
  return ttl >= 1 ? ttl : 0;
}

// Date.now() can cost more than the rest of a cache hit on some VMs (npm run bench:tokens), so hits read a clock
// refreshed at most once a millisecond (as lru-cache does). During one long synchronous run it
// lags: an entry may then outlive its TTL by that run's length (TTLs end well before expiry).
let clock = 0;
let clockFresh = false;
const clockTick = () => {
  clockFresh = false;
};
/** Date.now(), read at most once a millisecond. */
export function coarseNow(): number {
  if (!clockFresh) {
    clock = Date.now();
    clockFresh = true;
    const timer = setTimeout(clockTick, 1) as { unref?: () => void };
    if (typeof timer.unref === 'function') timer.unref();
  }
  return clock;
}

/** Options of {@link createMemoryTokenCache}. */
export interface MemoryTokenCacheOptions {
  /** Users kept at most; past it the least recently used goes first. @default 10000 */
  maxEntries?: number;
}

interface Entry {
  key: string;
  value: CachedToken;
  until: number;
  newer: Entry | undefined;
  older: Entry | undefined;
}

/**
 * A bounded in-memory cache: each entry expires after its own TTL, and past `maxEntries` the
 * least recently used goes first. A hit moves the entry in a linked list (no Map delete and
 * re-insert), so a busy user's hit costs the same however often it happens and however full
 * the cache is.
 * @param options `{ maxEntries }`: users kept at most (@default 10000). A bare number is read as
 * `maxEntries`, as before.
 * @example
 * createTokenExchange({ baseUrl, accessKey, secretKey, cache: createMemoryTokenCache({ maxEntries: 50_000 }) });
 */
export function createMemoryTokenCache(options: MemoryTokenCacheOptions | number = {}): TokenCache {
  const o = typeof options === 'number' ? { maxEntries: options } : options;
  if (typeof o !== 'object' || o === null) fail('createMemoryTokenCache takes { maxEntries }; got ' + describeValue(o));
  checkKeys(o, ['maxEntries'], 'createMemoryTokenCache option', { max: 'maxEntries', size: 'maxEntries' });
  const maxEntries = wholeNumber('createMemoryTokenCache: maxEntries', o.maxEntries ?? 10_000, 1, Number.MAX_SAFE_INTEGER, 'users', 10_000);
  const entries = new Map<string, Entry>();
  let newest: Entry | undefined;
  let oldest: Entry | undefined;

  function unlink(entry: Entry) {
    if (entry.newer) entry.newer.older = entry.older;
    else newest = entry.older;
    if (entry.older) entry.older.newer = entry.newer;
    else oldest = entry.newer;
    entry.newer = entry.older = undefined;
  }
  function makeNewest(entry: Entry) {
    entry.older = newest;
    if (newest) newest.newer = entry;
    else oldest = entry;
    newest = entry;
  }
  function remove(entry: Entry) {
    unlink(entry);
    entries.delete(entry.key);
  }

  return {
    get(key) {
      const entry = entries.get(key);
      if (entry === undefined) return undefined;
      if (coarseNow() >= entry.until) {
        remove(entry);
        return undefined;
      }
      if (entry !== newest) {
        unlink(entry);
        makeNewest(entry);
      }
      return entry.value;
    },
    set(key, value, ttlMs) {
      const existing = entries.get(key);
      if (!(ttlMs > 0)) {
        if (existing) remove(existing);
        return;
      }
      const until = Date.now() + ttlMs;
      if (existing) {
        existing.value = value;
        existing.until = until;
        if (existing !== newest) {
          unlink(existing);
          makeNewest(existing);
        }
        return;
      }
      const entry: Entry = { key, value, until, newer: undefined, older: undefined };
      entries.set(key, entry);
      makeNewest(entry);
      if (entries.size > maxEntries) remove(oldest as Entry);
    },
  };
}
