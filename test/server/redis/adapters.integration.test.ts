/**
 * createRedisTokenCache and createRedisDedupStore against a real redis-server, with each client a
 * user may hand them: ioredis 5 and 6, node-redis 4, 5 and 6.
 */
import { Redis as IoRedis6 } from 'ioredis';
import { Redis as IoRedis5 } from 'ioredis-v5';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import {
  ConfigError,
  createRedisDedupStore,
  createRedisTokenCache,
  createTokenExchange,
  type ExchangedToken,
  type TokenCache,
  type TokenCacheErrorInfo,
  type TokenExchangeOptions,
} from '../../../src/server-node.js';
import { startSandbox, type Sandbox } from '../../../src/testing.js';
import { hasRedis, redisMissing, startRedis, type RedisServer } from '../../helpers/redis.js';
import { clientKinds, type ClientKind, type ConnectedClient } from './clients.js';

// Passes on a set-up machine (a server starts and answers PING), fails under CI=true without
// redis-server (where .ci/run installs it), and is skipped with the reason elsewhere.
test('redis-server is installed and starts', async (context) => {
  if (!hasRedis && process.env.CI !== 'true') context.skip(redisMissing);
  expect({ redis: hasRedis ? 'found' : redisMissing }).toEqual({ redis: 'found' });
  const server = await startRedis();
  try {
    const client = await clientKinds[0].connect(server.url);
    try {
      expect(await client.raw.keys('*')).toEqual([]);
    } finally {
      await client.close();
    }
  } finally {
    await server.stop();
  }
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** fetch with added latency, so that concurrent callers really overlap. */
const slowFetch =
  (ms: number): typeof fetch =>
  async (input, init) => {
    await sleep(ms);
    return fetch(input, init);
  };

// What the tests allow a getToken against a failing Redis: the default cacheTimeout (200 ms)
// plus generous slack for a shared machine. Before the bound existed it was the 10-second timeout.
const BOUND_MS = 1500;

async function timed(call: () => Promise<ExchangedToken>): Promise<{ ms: number; token: ExchangedToken }> {
  const started = performance.now();
  const token = await call();
  return { ms: performance.now() - started, token };
}

/** The Redis cache, counting the calls that reach it. */
function counted(cache: ReturnType<typeof createRedisTokenCache>) {
  const calls = { n: 0 };
  const wrapped: TokenCache = {
    get: (key) => (calls.n++, cache.get(key)),
    set: (key, value, ttl) => (calls.n++, cache.set(key, value, ttl)),
    lock: (key, ttl) => (calls.n++, cache.lock(key, ttl)),
  };
  return { cache: wrapped, calls };
}

describe.runIf(hasRedis).each(clientKinds)('$name', (kind: ClientKind) => {
  let redis: RedisServer;
  let sandbox: Sandbox;
  let shortSandbox: Sandbox;
  const open: ConnectedClient[] = [];
  const connect = async (url = redis.url) => {
    const connected = await kind.connect(url);
    open.push(connected);
    return connected;
  };
  const exchangeOn = (target: Sandbox, extra: Partial<TokenExchangeOptions>) => createTokenExchange({ baseUrl: target.url, ...target.credentials, ...extra });

  beforeAll(async () => {
    [redis, sandbox, shortSandbox] = await Promise.all([startRedis(), startSandbox(), startSandbox({ tokenTtlSeconds: 60 })]);
  });
  afterAll(async () => {
    await Promise.all([redis?.stop(), sandbox?.close(), shortSandbox?.close()]);
  });
  beforeEach(async () => {
    const { raw } = await connect();
    await raw.flushall();
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.close()));
  });

  test('tokens are stored under the prefix with a PX TTL and shared by another instance', async () => {
    const [a, b] = [await connect(), await connect()];
    const errors: TokenCacheErrorInfo[] = [];
    const first = exchangeOn(sandbox, { cache: createRedisTokenCache(a.client, { prefix: 'app1:' }), onCacheError: (e) => errors.push(e) });
    const second = exchangeOn(sandbox, { cache: createRedisTokenCache(b.client, { prefix: 'app1:' }), onCacheError: (e) => errors.push(e) });
    const calls = sandbox.stats.tokenCalls;
    const token = await first.getToken('alice');
    await expect.poll(() => a.raw.keys('app1:*')).toHaveLength(1);
    expect(await second.getToken('alice')).toEqual(token);
    expect(sandbox.stats.tokenCalls - calls).toBe(1);
    const [key] = await a.raw.keys('app1:*');
    expect(key).toBe(`app1:${sandbox.url.replace(':', '%3A').replace(/:(\d+)$/, '%3A$1')}:${sandbox.credentials.accessKey}:alice`);
    const ttl = await a.raw.pttl(key);
    expect(ttl).toBeGreaterThan(830_000);
    expect(ttl).toBeLessThanOrEqual(840_000);
    expect(JSON.parse(String(await a.raw.get(key)))).toEqual(token);
    expect(errors).toEqual([]);
  });

  test('60-second tokens: kept for half their life (never SET PX 0), hits after the first call, no errors', async () => {
    const { client, raw } = await connect();
    const errors: TokenCacheErrorInfo[] = [];
    const exchange = exchangeOn(shortSandbox, { cache: createRedisTokenCache(client), onCacheError: (e) => errors.push(e) });
    const calls = shortSandbox.stats.tokenCalls;
    const token = await exchange.getToken('bob');
    expect(token.expiresIn).toBe(60);
    await expect.poll(() => raw.keys('channel-sdk:token:*')).toHaveLength(1);
    for (let i = 0; i < 5; i++) expect(await exchange.getToken('bob')).toEqual(token);
    expect(shortSandbox.stats.tokenCalls - calls).toBe(1);
    const ttl = await raw.pttl((await raw.keys('channel-sdk:token:*'))[0]);
    expect(ttl).toBeGreaterThan(25_000);
    expect(ttl).toBeLessThanOrEqual(30_000);
    expect(errors).toEqual([]);
  });

  test('several instances, many concurrent callers: one token-endpoint call per user (cross-instance single flight)', async () => {
    const errors: TokenCacheErrorInfo[] = [];
    const instances = await Promise.all(
      [0, 1, 2, 3].map(async () =>
        exchangeOn(sandbox, { cache: createRedisTokenCache((await connect()).client), fetch: slowFetch(50), onCacheError: (e) => errors.push(e) }),
      ),
    );
    const users = ['u1', 'u2', 'u3'];
    const calls = sandbox.stats.tokenCalls;
    const tokens = await Promise.all(
      instances.flatMap((exchange) => users.flatMap((user) => Array.from({ length: 25 }, () => exchange.getToken(user).then((t) => [user, t.accessToken])))),
    );
    expect(sandbox.stats.tokenCalls - calls).toBe(users.length);
    for (const user of users) expect(new Set(tokens.filter(([u]) => u === user).map(([, t]) => t)).size).toBe(1);
    expect(errors).toEqual([]);
  });

  test('forceRefresh reaches the service and the new token replaces the shared one', async () => {
    const [a, b] = [await connect(), await connect()];
    const first = exchangeOn(sandbox, { cache: createRedisTokenCache(a.client), onCacheError: () => {} });
    const second = exchangeOn(sandbox, { cache: createRedisTokenCache(b.client), onCacheError: () => {} });
    const calls = sandbox.stats.tokenCalls;
    const old = await first.getToken('carol');
    const forced = await second.getToken('carol', { forceRefresh: true });
    expect(forced.accessToken).not.toBe(old.accessToken);
    expect(sandbox.stats.tokenCalls - calls).toBe(2);
    await expect.poll(async () => (await first.getToken('carol')).accessToken).toBe(forced.accessToken);
  });

  test('the lock expires by itself and is released only by its owner (compare-and-delete)', async () => {
    const cache = createRedisTokenCache((await connect()).client);
    const mine = await cache.lock('k', 100);
    expect(mine).toBeDefined();
    expect(await cache.lock('k', 5000)).toBeUndefined();
    await sleep(150);
    const theirs = await cache.lock('k', 5000);
    expect(theirs).toBeDefined();
    await mine?.release(); // expired: must not free the lock someone else holds now
    expect(await cache.lock('k', 5000)).toBeUndefined();
    await theirs?.release();
    expect(await cache.lock('k', 5000)).toBeDefined();
  });

  test('dedup store: one lease across clients, renewed and released by its holder only; processed only after complete', async () => {
    const [a, b] = [await connect(), await connect()];
    const one = createRedisDedupStore(a.client, { prefix: 'hooks:', ttlSeconds: 600 });
    const two = createRedisDedupStore(b.client, { prefix: 'hooks:', ttlSeconds: 600 });
    const lease = (id: string, ms = 5000) => ({ id, ms });
    const claims = await Promise.all(['1', '2', '3', '4'].map((id, i) => (i % 2 ? two : one).claim('abc', lease(id))));
    expect(claims.toSorted()).toEqual(['claimed', 'running', 'running', 'running']);
    const holder = lease(String(claims.indexOf('claimed') + 1));
    expect(await a.raw.keys('hooks:*')).toEqual(['hooks:abc']);
    expect(await a.raw.get('hooks:abc')).toBe('lease:' + holder.id);
    expect(await a.raw.pttl('hooks:abc')).toBeLessThanOrEqual(5000);
    expect(await two.renew('abc', lease('not-the-holder', 60_000))).toBe(false);
    expect(await one.renew('abc', { ...holder, ms: 60_000 })).toBe(true);
    expect(await a.raw.pttl('hooks:abc')).toBeGreaterThan(5000);
    await two.release('abc', lease('not-the-holder'));
    expect(await one.claim('abc', lease('5'))).toBe('running');
    await two.release('abc', holder); // the callback failed: the next delivery claims at once
    expect(await one.claim('abc', lease('6'))).toBe('claimed');
    await two.complete('abc', lease('6'));
    expect(await a.raw.get('hooks:abc')).toBe('1'); // what versions before leases wrote: read as processed too
    const ttl = await a.raw.pttl('hooks:abc');
    expect(ttl).toBeGreaterThan(590_000);
    expect(ttl).toBeLessThanOrEqual(600_000);
    await one.release('abc', lease('6')); // a late release leaves the processed mark
    expect(await two.claim('abc', lease('7'))).toBe('done');
    expect(await createRedisDedupStore(a.client).claim('abc', lease('8'))).toBe('claimed'); // another prefix, another key
    expect(await one.claim('dies', lease('9', 50))).toBe('claimed'); // a holder that never renews
    await sleep(120);
    expect(await two.claim('dies', lease('10'))).toBe('claimed');
  });

  test('Redis stopped (SIGTERM) mid-run, default options: every getToken (new, cached, forced) answers within the cache bound through the service, 0 errors, reports without tokens', async () => {
    const own = await startRedis();
    try {
      const { client } = await connect(own.url);
      const reports: TokenCacheErrorInfo[] = [];
      const exchange = exchangeOn(sandbox, { cache: createRedisTokenCache(client), onCacheError: (e) => reports.push(e) });
      const seen: string[] = [];
      const slow: number[] = [];
      const round = async (n: number) => {
        const results = await Promise.allSettled(
          Array.from({ length: 10 }, async (_, i) => {
            const started = performance.now();
            const token = await exchange.getToken('user-' + ((n + i) % 5), { forceRefresh: i === 9 });
            slow.push(performance.now() - started);
            seen.push(token.accessToken);
          }),
        );
        expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
      };
      for (let n = 0; n < 3; n++) await round(n);
      const stopping = own.stop(); // commands already sent wait out the bound
      await round(3);
      await stopping;
      for (let n = 4; n < 8; n++) await round(n);
      expect(seen).toHaveLength(80);
      expect(reports.length).toBeGreaterThan(0);
      const said = JSON.stringify(reports);
      for (const token of new Set(seen)) expect(said).not.toContain(token);
      expect(said).not.toContain(sandbox.credentials.secretKey);
      expect(Math.max(...slow)).toBeLessThan(BOUND_MS); // the bench measures the real figure
    } finally {
      await own.stop();
    }
  });

  test('cache faults: Redis frozen (SIGSTOP), default options -> new users, cached users and forced refreshes each answer within the cache bound, 0 errors; one report; no cache call during the cool-down', async () => {
    const own = await startRedis();
    try {
      const { client } = await connect(own.url);
      const { raw } = await connect(own.url);
      const reports: TokenCacheErrorInfo[] = [];
      const { cache, calls } = counted(createRedisTokenCache(client));
      const exchange = exchangeOn(sandbox, { cache, onCacheError: (e) => reports.push(e) });
      await Promise.all(['w0', 'w1', 'w2', 'w3'].map((user) => exchange.getToken(user)));
      await expect.poll(() => raw.keys('channel-sdk:token:*')).toHaveLength(4);
      own.pause();
      const first = await Promise.all([
        timed(() => exchange.getToken('new-1')),
        timed(() => exchange.getToken('w0')),
        timed(() => exchange.getToken('w1', { forceRefresh: true })),
      ]);
      expect(first.map((r) => r.ms).filter((ms) => ms >= BOUND_MS)).toEqual([]);
      // The breaker is open: no call reaches the frozen Redis, and a user served meanwhile is
      // kept in this process (one token call per user, not one per getToken).
      const reached = calls.n;
      const tokenCalls = sandbox.stats.tokenCalls;
      const next = await Promise.all([
        timed(() => exchange.getToken('new-2')),
        timed(() => exchange.getToken('w2')),
        timed(() => exchange.getToken('w3', { forceRefresh: true })),
      ]);
      const again = await timed(() => exchange.getToken('new-1'));
      expect([...next, again].map((r) => r.ms).filter((ms) => ms >= BOUND_MS)).toEqual([]);
      expect(again.token).toEqual(first[0].token);
      expect(sandbox.stats.tokenCalls - tokenCalls).toBe(3);
      expect(calls.n).toBe(reached);
      expect(reports).toHaveLength(1);
      expect(reports[0]).toMatchObject({ reason: 'timeout', message: 'no answer within 200 ms', skipMs: 5000 });
    } finally {
      own.resume();
      await own.stop();
    }
  });

  test('cache faults: after a frozen Redis thaws, one probe after the cool-down finds it and the cache serves again', async () => {
    const own = await startRedis();
    try {
      const { client } = await connect(own.url);
      const reports: TokenCacheErrorInfo[] = [];
      const { cache, calls } = counted(createRedisTokenCache(client));
      const exchange = exchangeOn(sandbox, { cache, cacheCooldown: 400, onCacheError: (e) => reports.push(e) });
      const cached = await exchange.getToken('kept');
      await sleep(50); // the store lands
      own.pause();
      await exchange.getToken('other'); // opens the breaker
      await sleep(450);
      await exchange.getToken('other-2'); // the probe: still frozen, so another cool-down
      expect(reports.map((r) => [r.reason, r.skipMs])).toEqual([
        ['timeout', 400],
        ['timeout', 400],
      ]);
      own.resume();
      await sleep(450);
      const tokenCalls = sandbox.stats.tokenCalls;
      const before = calls.n;
      expect(await exchange.getToken('kept')).toEqual(cached); // from Redis again
      expect(sandbox.stats.tokenCalls).toBe(tokenCalls);
      expect(calls.n).toBeGreaterThan(before);
      expect(reports).toHaveLength(2);
    } finally {
      own.resume();
      await own.stop();
    }
  });

  test('cache faults: Redis frozen while another instance holds the lock (SET NX PX) -> the waiter answers within the cache bound, 0 errors', async () => {
    const own = await startRedis();
    try {
      const [a, b] = [await connect(own.url), await connect(own.url)];
      const holder = exchangeOn(sandbox, { cache: createRedisTokenCache(a.client), fetch: slowFetch(700), onCacheError: () => {} });
      const waiter = exchangeOn(sandbox, { cache: createRedisTokenCache(b.client), onCacheError: () => {} });
      const held = holder.getToken('locked');
      await expect.poll(() => a.raw.keys('channel-sdk:token:lock:*'), { interval: 5 }).toHaveLength(1);
      const waiting = timed(() => waiter.getToken('locked'));
      await sleep(60); // the waiter is polling the cache for the holder's token
      own.pause();
      const frozen = performance.now();
      const got = await waiting;
      expect(performance.now() - frozen).toBeLessThan(BOUND_MS);
      expect(got.token.tokenType).toBe('Bearer');
      await expect(held).resolves.toMatchObject({ tokenType: 'Bearer' });
    } finally {
      own.resume();
      await own.stop();
    }
  });
});

describe.runIf(hasRedis).each([
  ['ioredis 6', IoRedis6],
  ['ioredis 5', IoRedis5],
] as const)('%s', (_name, RedisClass) => {
  test('cache faults: Redis unreachable from the start (nothing listens there) -> the first getToken answers within the cache bound', async () => {
    const gone = await startRedis();
    await gone.stop(); // its port, now with nothing behind it
    const client = new (RedisClass as typeof IoRedis6)(gone.url);
    client.on('error', () => {});
    const sandbox = await startSandbox();
    try {
      const exchange = createTokenExchange({ baseUrl: sandbox.url, ...sandbox.credentials, cache: createRedisTokenCache(client), onCacheError: () => {} });
      const first = await timed(() => exchange.getToken('first'));
      expect(first.ms).toBeLessThan(BOUND_MS);
      expect(first.token.tokenType).toBe('Bearer');
    } finally {
      client.disconnect();
      await sandbox.close();
    }
  });
});

test('something that is not a Redis client -> ConfigError naming what to pass', () => {
  expect(() => createRedisTokenCache({} as never)).toThrow(ConfigError);
  expect(() => createRedisTokenCache(undefined as never)).toThrow(/needs your Redis client \(ioredis, or node-redis/);
  const lookalike = { get() {}, set() {}, del() {}, eval() {} };
  expect(() => createRedisDedupStore(lookalike as never)).toThrow(/ioredis client \(it has `status`\) or a node-redis client \(it has `isOpen`\)/);
  const ioredisShaped = { ...lookalike, status: 'ready' };
  expect(() => createRedisTokenCache(ioredisShaped as never, { prefix: 7 as never })).toThrow(/prefix must be a string/);
  expect(() => createRedisDedupStore(ioredisShaped as never, { ttlSeconds: 0 })).toThrow(
    /ttlSeconds must be a whole number of seconds from 1 to 31536000 \(e\.g\. 86400\); got 0/,
  );
  expect(() => createRedisDedupStore(ioredisShaped as never, { ttlSeconds: '60' as never })).toThrow(/got "60"/);
  expect(() => createRedisDedupStore(ioredisShaped as never, { ttl: 60 } as never)).toThrow(
    /unknown createRedisDedupStore\(redis, options\) option "ttl"; did you mean "ttlSeconds"\?/,
  );
});
