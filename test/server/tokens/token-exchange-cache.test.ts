/**
 * The exchange and its cache: TTLs (never <= 0, short tokens shared for half their life), cache
 * calls bounded by `timeout` with the service as fallback, keys, copies, and the optional lock.
 */
import { afterEach, expect, test, vi } from 'vitest';
import { FULL } from '../../helpers/tier.js';
import {
  createMemoryTokenCache,
  createTokenExchange,
  type ExchangedToken,
  type TokenCache,
  type TokenCacheErrorInfo,
  type TokenCacheLock,
} from '../../../src/server-node.js';
import { makeJwt } from '../../helpers/fake-service.js';
import { accessKey, endpoint, secretKey } from './token-endpoint.js';

afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

const tokenFor =
  (expiresIn: number) =>
  (body: { external_user_id: string }): [number, unknown] => [
    200,
    { code: 0, data: { access_token: makeJwt({ sub: body.external_user_id, r: Math.random() }), expires_in: expiresIn, token_type: 'Bearer' } },
  ];
const never = () => new Promise<never>(() => {});

/** A Map-backed cache that records every call; `lock` is a plain in-process lock with expiry. */
function recordingCache(options: { lock?: boolean } = {}) {
  const store = new Map<string, ExchangedToken>();
  const locks = new Map<string, number>();
  const ttls: number[] = [];
  const cache: TokenCache = {
    get: async (key) => store.get(key),
    set: async (key, value, ttlMs) => {
      ttls.push(ttlMs);
      store.set(key, value);
    },
  };
  if (options.lock) {
    cache.lock = async (key, ttlMs): Promise<TokenCacheLock | undefined> => {
      if ((locks.get(key) ?? 0) > Date.now()) return undefined;
      locks.set(key, Date.now() + ttlMs);
      return { release: () => void locks.delete(key) };
    };
  }
  return { cache, store, ttls, locks };
}

test('never calls cache.set with a TTL <= 0, and always with whole milliseconds', async () => {
  for (const expiresIn of [0.001, 0.002, 0.5, 1, 59, 60, 61, 119, 120, 121, 900]) {
    const service = await endpoint({ answer: tokenFor(expiresIn) });
    const { cache, ttls } = recordingCache();
    const exchange = createTokenExchange({ baseUrl: service.url, accessKey, secretKey, cache, onCacheError: () => {} });
    await exchange.getToken('u'); // the exchange calls set before getToken resolves (and settles it in the background)
    expect(ttls.length).toBe(expiresIn < 0.002 ? 0 : expiresIn > 0.5 ? 1 : ttls.length); // a token of a few ms may not be worth storing
    for (const ttl of ttls) {
      expect(Number.isInteger(ttl)).toBe(true);
      expect(ttl).toBeGreaterThanOrEqual(1);
    }
  }
});

test('tokens shorter than twice cacheMargin are shared for half their life (60-second tokens: hits after the first call)', async () => {
  const service = await endpoint({ answer: tokenFor(60) });
  const { cache, ttls } = recordingCache();
  const exchange = createTokenExchange({ baseUrl: service.url, accessKey, secretKey, cache, cacheMargin: 60 });
  const first = await exchange.getToken('u');
  for (let i = 0; i < 5; i++) expect(await exchange.getToken('u')).toEqual(first);
  expect(service.calls).toHaveLength(1);
  expect(ttls).toHaveLength(1);
  expect(ttls[0]).toBeGreaterThan(29_000);
  expect(ttls[0]).toBeLessThanOrEqual(30_000);
});

test('the in-memory cache caches short tokens too', async () => {
  const service = await endpoint({ answer: tokenFor(60) });
  const exchange = createTokenExchange({ baseUrl: service.url, accessKey, secretKey });
  const [a, b] = [await exchange.getToken('u'), await exchange.getToken('u')];
  expect(b).toEqual(a);
  expect(service.calls).toHaveLength(1);
});

test('a token is handed out until min(cacheMargin, half its life) before expiry', async () => {
  const service = await endpoint({ answer: tokenFor(900) });
  const { cache, store } = recordingCache();
  const exchange = createTokenExchange({ baseUrl: service.url, accessKey, secretKey, cache, cacheMargin: 60 });
  const key = `${service.url.replace(/:/g, '%3A')}:${accessKey}:u`;
  const now = Date.now();
  const cases: Array<[expiresIn: number, left: number, handedOut: boolean]> = [
    [900, 70_000, true],
    [900, 50_000, false],
    [50, 30_000, true], // margin is 25 s for a 50-second token
    [50, 20_000, false],
  ];
  for (const [expiresIn, left, handedOut] of cases) {
    store.set(key, { accessToken: 'cached.jwt.x', expiresIn, tokenType: 'Bearer', expiresAt: now + left });
    const got = await exchange.getToken('u');
    expect([expiresIn, left, got.accessToken === 'cached.jwt.x']).toEqual([expiresIn, left, handedOut]);
  }
});

test.each([
  [
    'get throws',
    {
      get: () => {
        throw new Error('boom');
      },
    },
    'get',
    'error',
  ],
  ['get rejects', { get: () => Promise.reject(new Error('boom')) }, 'get', 'error'],
  ['get never answers', { get: never }, 'get', 'timeout'],
  ['get returns junk', { get: () => Promise.resolve('{"accessToken":' as never) }, 'get', 'invalid'],
  [
    'set throws',
    {
      set: () => {
        throw new Error('ERR invalid expire time');
      },
    },
    'set',
    'error',
  ],
  ['set never answers', { set: never }, 'set', 'timeout'],
  ['lock rejects', { lock: () => Promise.reject(new Error('NOSCRIPT')) }, 'lock', 'error'],
  ['lock never answers', { lock: never }, 'lock', 'timeout'],
] as const)('a cache whose %s: getToken falls back to the service and reports it', async (_label, broken, operation, reason) => {
  const service = await endpoint({ delayMs: 5 });
  const { cache } = recordingCache({ lock: true });
  const reports: TokenCacheErrorInfo[] = [];
  const exchange = createTokenExchange({
    baseUrl: service.url,
    accessKey,
    secretKey,
    cache: { ...cache, ...broken } as TokenCache,
    // The token call's own bound, far above the 5 ms it takes (a busy machine); the cache's is cacheTimeout (200 ms).
    timeout: 2000,
    onCacheError: (e) => reports.push(e),
  });
  const tokens = await Promise.all([exchange.getToken('u'), exchange.getToken('u'), exchange.getToken('u')]);
  expect(new Set(tokens.map((t) => t.accessToken)).size).toBe(1); // joined callers all got the fresh token
  expect(service.calls).toHaveLength(1);
  await vi.waitFor(() => expect(reports).toContainEqual(expect.objectContaining({ operation, reason })));
});

test('reports never carry a token or the secret, even when the cache error does', async () => {
  const service = await endpoint();
  const reports: TokenCacheErrorInfo[] = [];
  const cache: TokenCache = {
    get: () => undefined,
    set: (_key, value) => {
      throw new Error(`cannot store ${JSON.stringify(value)} (signed with ${secretKey})`);
    },
  };
  const exchange = createTokenExchange({ baseUrl: service.url, accessKey, secretKey, cache, onCacheError: (e) => reports.push(e) });
  const token = await exchange.getToken('u');
  expect(reports).toHaveLength(1);
  expect(reports[0].message).toContain('[token]');
  expect(JSON.stringify(reports)).not.toContain(token.accessToken);
  expect(JSON.stringify(reports)).not.toContain(secretKey);
});

test('without onCacheError, the first cache failure is one console.warn, without the token', async () => {
  const service = await endpoint();
  const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
  const exchange = createTokenExchange({
    baseUrl: service.url,
    accessKey,
    secretKey,
    cache: { get: () => Promise.reject(new Error('ECONNREFUSED')), set: () => {} },
  });
  const tokens = [await exchange.getToken('a'), await exchange.getToken('b')];
  expect(warn).toHaveBeenCalledTimes(1);
  expect(String(warn.mock.calls[0][0])).toMatch(
    /token cache get failed \(Error: ECONNREFUSED\); asking the token endpoint instead, and skipping the cache for 5000 ms\. Pass onCacheError/,
  );
  for (const token of tokens) expect(String(warn.mock.calls[0][0])).not.toContain(token.accessToken);
});

test('the cache key holds the base URL and escapes its parts: no collisions between services, keys or users', async () => {
  const [production, staging] = [await endpoint({ anyKey: true }), await endpoint({ anyKey: true })];
  const { cache, store } = recordingCache();
  const exchange = (baseUrl: string, key: string) => createTokenExchange({ baseUrl, accessKey: key, secretKey, cache });
  const tokens = [
    await exchange(production.url, 'partner:eu').getToken('alice'),
    await exchange(production.url, 'partner').getToken('eu:alice'),
    await exchange(staging.url, 'partner:eu').getToken('alice'),
    await exchange(production.url, 'partner%3Aeu').getToken('alice'),
  ];
  expect(new Set(tokens.map((t) => t.accessToken)).size).toBe(4);
  expect(store.size).toBe(4);
  expect(production.calls).toHaveLength(3);
  expect(staging.calls).toHaveLength(1);
});

test('cached values are copied out: a caller mutating its token changes nothing for the next', async () => {
  const service = await endpoint({ delayMs: 20 });
  const exchange = createTokenExchange({ baseUrl: service.url, accessKey, secretKey });
  const [a, b] = await Promise.all([exchange.getToken('u'), exchange.getToken('u')]);
  const original = { ...a };
  a.accessToken = 'mutated';
  a.expiresAt = 0;
  expect(b).toEqual(original);
  const c = await exchange.getToken('u');
  expect(c).toEqual(original);
  c.accessToken = 'mutated again';
  expect(await exchange.getToken('u')).toEqual(original);
  expect(service.calls).toHaveLength(1);
});

test("with a lock: two exchanges on one cache make one service call; the waiter reads the holder's token", async () => {
  const service = await endpoint({ delayMs: 80 });
  const { cache, locks } = recordingCache({ lock: true });
  const [one, two] = [0, 1].map(() => createTokenExchange({ baseUrl: service.url, accessKey, secretKey, cache }));
  const tokens = await Promise.all([one.getToken('u'), two.getToken('u'), one.getToken('u'), two.getToken('u')]);
  expect(new Set(tokens.map((t) => t.accessToken)).size).toBe(1);
  expect(service.calls).toHaveLength(1);
  await vi.waitFor(() => expect(locks.size).toBe(0)); // released after the token was stored
});

test('concurrent callers for one user share one cache read, and a hit from an async cache is shared too', async () => {
  const service = await endpoint({ delayMs: 20 });
  const { cache } = recordingCache();
  let reads = 0;
  const counting: TokenCache = { ...cache, get: (key) => (reads++, cache.get(key)) };
  const exchange = createTokenExchange({ baseUrl: service.url, accessKey, secretKey, cache: counting });
  await Promise.all(Array.from({ length: 20 }, () => exchange.getToken('u')));
  expect([reads, service.calls.length]).toEqual([1, 1]);
  await Promise.all(Array.from({ length: 20 }, () => exchange.getToken('u')));
  expect([reads, service.calls.length]).toEqual([2, 1]);
});

test('a lock holder that never delivers: the waiter asks the service itself after `timeout`', async () => {
  const service = await endpoint();
  const { cache } = recordingCache({ lock: true });
  await cache.lock?.(`${service.url.replace(/:/g, '%3A')}:${accessKey}:u`, 60_000); // a holder that died
  const exchange = createTokenExchange({ baseUrl: service.url, accessKey, secretKey, cache, timeout: 150 });
  await expect(exchange.getToken('u')).resolves.toMatchObject({ tokenType: 'Bearer' });
  expect(service.calls).toHaveLength(1);
});

// The lock comes 250 ms in, the exchange gives up at 100 ms: raced by the wall clock (test/helpers/tier.ts).
test.runIf(FULL)('a lock granted after the exchange gave up on it is given back at once', async () => {
  const service = await endpoint();
  let released = 0;
  const cache: TokenCache = {
    get: async () => undefined,
    set: async () => {},
    lock: () => new Promise((resolve) => setTimeout(() => resolve({ release: () => void released++ }), 250)),
  };
  const exchange = createTokenExchange({ baseUrl: service.url, accessKey, secretKey, cache, timeout: 100, onCacheError: () => {} });
  await exchange.getToken('u');
  expect(released).toBe(0);
  await vi.waitFor(() => expect(released).toBe(1));
});

test('forceRefresh never answers from the cache, and non-forced callers join a forced refresh', async () => {
  const service = await endpoint({ delayMs: 30 });
  const { cache } = recordingCache({ lock: true });
  const exchange = createTokenExchange({ baseUrl: service.url, accessKey, secretKey, cache });
  const old = await exchange.getToken('u');
  const [forced, joined] = await Promise.all([exchange.getToken('u', { forceRefresh: true }), exchange.getToken('u', { forceRefresh: false })]);
  expect(forced.accessToken).not.toBe(old.accessToken);
  expect(joined.accessToken).toBe(forced.accessToken);
  expect(service.calls).toHaveLength(2);
});

test('createMemoryTokenCache: LRU order, expiry per entry, a bad size refused', () => {
  // The clock is faked: on a busy machine more than b's 30 ms passed between its set and its first get.
  vi.useFakeTimers();
  const cache = createMemoryTokenCache(2);
  const value = { accessToken: 'x', expiresIn: 900, tokenType: 'Bearer' as const, expiresAt: Date.now() + 900_000 };
  cache.set('a', value, 1000);
  cache.set('b', value, 30);
  cache.set('c', value, 1000); // evicts a, the least recently used
  expect(cache.get('a')).toBeUndefined();
  expect(cache.get('b')).toBe(value);
  vi.advanceTimersByTime(40);
  expect(cache.get('b')).toBeUndefined(); // its own TTL ran out
  vi.useRealTimers();
  expect(cache.get('c')).toBe(value);
  cache.set('c', value, 0); // a TTL of 0 stores nothing (and drops what was there)
  expect(cache.get('c')).toBeUndefined();
  expect(() => createMemoryTokenCache(0)).toThrow(/createMemoryTokenCache: maxEntries must be a whole number of users from 1 to \d+ \(e\.g\. 10000\); got 0/);
  // #31 item 5: an options object like every other constructor; the bare number is still read.
  expect(() => createMemoryTokenCache({ maxEntries: 1.5 })).toThrow(/maxEntries must be a whole number of users/);
  expect(() => createMemoryTokenCache({ maxEntry: 5 } as never)).toThrow(/unknown createMemoryTokenCache option "maxEntry"; did you mean "maxEntries"\?/);
  const one = createMemoryTokenCache({ maxEntries: 1 });
  one.set('a', value, 60_000);
  one.set('b', value, 60_000);
  expect([one.get('a'), one.get('b')]).toEqual([undefined, value]);
});

// Its 50-ms cacheTimeout and 300-ms cooldowns are raced by the wall clock: integration tier only (test/helpers/tier.ts).
test.runIf(FULL)(
  'the cache breaker: after a failure the cache is skipped for cacheCooldown (one report), then one call probes it; success brings it back',
  async () => {
    const service = await endpoint();
    const { cache, store } = recordingCache({ lock: true });
    let broken = true;
    let calls = 0;
    const flaky: TokenCache = {
      get: (key) => (calls++, broken ? never() : cache.get(key)),
      set: (key, value, ttl) => (calls++, broken ? never() : cache.set(key, value, ttl)),
      lock: (key, ttl) => (calls++, broken ? never() : (cache.lock as NonNullable<TokenCache['lock']>)(key, ttl)),
    };
    const reports: TokenCacheErrorInfo[] = [];
    const exchange = createTokenExchange({
      baseUrl: service.url,
      accessKey,
      secretKey,
      cache: flaky,
      cacheTimeout: 50,
      cacheCooldown: 300,
      onCacheError: (e) => reports.push(e),
    });
    await Promise.all([exchange.getToken('a'), exchange.getToken('b'), exchange.getToken('c')]);
    expect(reports).toEqual([{ operation: 'get', reason: 'timeout', message: 'no answer within 50 ms', skipMs: 300 }]);
    const reached = calls;
    const again = await exchange.getToken('a'); // kept in this process meanwhile: no second token call for a
    expect(calls).toBe(reached);
    expect(service.calls).toHaveLength(3);
    await new Promise((r) => setTimeout(r, 320));
    await exchange.getToken('d'); // the probe: still broken
    expect(reports).toHaveLength(2);
    expect(calls).toBe(reached + 1);
    broken = false;
    await new Promise((r) => setTimeout(r, 320));
    await exchange.getToken('e'); // the probe succeeds: the cache is back
    await vi.waitFor(() => expect(store.size).toBe(1));
    expect(await exchange.getToken('e')).toEqual(await exchange.getToken('e'));
    expect(service.calls.map((c) => c.user)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(reports).toHaveLength(2);
    expect(again.tokenType).toBe('Bearer');
  },
);

test('cacheCooldown: 0 never skips the cache: every call tries it and every failure is reported', async () => {
  const service = await endpoint();
  const reports: TokenCacheErrorInfo[] = [];
  let calls = 0;
  const exchange = createTokenExchange({
    baseUrl: service.url,
    accessKey,
    secretKey,
    cache: { get: () => (calls++, Promise.reject(new Error('down'))), set: () => {} },
    cacheCooldown: 0,
    onCacheError: (e) => reports.push(e),
  });
  await exchange.getToken('a');
  await exchange.getToken('b');
  expect(calls).toBe(2);
  expect(reports.map((r) => [r.operation, r.skipMs])).toEqual([
    ['get', 0],
    ['get', 0],
  ]);
});

test('forced refreshes: concurrent ones share one call; within forceRefreshWindow the token a forced refresh obtained answers later forced calls', async () => {
  const service = await endpoint({ delayMs: 20 });
  const exchange = createTokenExchange({ baseUrl: service.url, accessKey, secretKey, forceRefreshWindow: 300 });
  const plain = await exchange.getToken('u');
  const concurrent = await Promise.all(Array.from({ length: 20 }, () => exchange.getToken('u', { forceRefresh: true })));
  expect(new Set(concurrent.map((t) => t.accessToken)).size).toBe(1);
  expect(concurrent[0].accessToken).not.toBe(plain.accessToken);
  for (let i = 0; i < 20; i++) expect(await exchange.getToken('u', { forceRefresh: true })).toEqual(concurrent[0]);
  expect(service.calls).toHaveLength(2);
  expect(Object.keys(concurrent[0])).toEqual(['accessToken', 'expiresIn', 'tokenType', 'expiresAt']); // forcedAt stays inside
  await new Promise((r) => setTimeout(r, 320));
  expect((await exchange.getToken('u', { forceRefresh: true })).accessToken).not.toBe(concurrent[0].accessToken);
  expect(service.calls).toHaveLength(3);
});

test('forceRefreshWindow: 0 -> every forced refresh calls the service; a shared cache without forcedAt support just loses the sharing', async () => {
  const service = await endpoint();
  const exchange = createTokenExchange({ baseUrl: service.url, accessKey, secretKey, forceRefreshWindow: 0 });
  for (let i = 0; i < 3; i++) await exchange.getToken('u', { forceRefresh: true });
  expect(service.calls).toHaveLength(3);
  // A cache that keeps only the four token fields (forcedAt dropped): forced calls are not shared.
  const { cache, store } = recordingCache();
  const lossy: TokenCache = {
    get: cache.get,
    set: (key, { accessToken, expiresIn, tokenType, expiresAt }, ttl) => cache.set(key, { accessToken, expiresIn, tokenType, expiresAt }, ttl),
  };
  const other = createTokenExchange({ baseUrl: service.url, accessKey, secretKey, cache: lossy });
  await other.getToken('v', { forceRefresh: true });
  await other.getToken('v', { forceRefresh: true });
  expect(service.calls).toHaveLength(5);
  expect(store.size).toBe(1);
});

test('forced refreshes across instances sharing a cache with a lock: one token call, the others take the forced token', async () => {
  const service = await endpoint({ delayMs: 60 });
  const { cache } = recordingCache({ lock: true });
  const instances = [0, 1, 2, 3].map(() => createTokenExchange({ baseUrl: service.url, accessKey, secretKey, cache }));
  const old = await instances[0].getToken('u');
  const tokens = await Promise.all(
    instances.flatMap((exchange) => [exchange.getToken('u', { forceRefresh: true }), exchange.getToken('u', { forceRefresh: true })]),
  );
  expect(new Set(tokens.map((t) => t.accessToken)).size).toBe(1);
  expect(tokens[0].accessToken).not.toBe(old.accessToken);
  expect(service.calls).toHaveLength(2);
  for (const exchange of instances) expect(await exchange.getToken('u', { forceRefresh: true })).toEqual(tokens[0]);
  expect(service.calls).toHaveLength(2);
});
