/**
 * createRedisTokenCache and createRedisDedupStore against a real redis-server, with each client a
 * user may hand them: ioredis 5 and 6, node-redis 4, 5 and 6.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import {
  ConfigError,
  createRedisDedupStore,
  createRedisTokenCache,
  createTokenExchange,
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
const slowFetch = (ms: number): typeof fetch => async (input, init) => {
  await sleep(ms);
  return fetch(input, init);
};

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
      [0, 1, 2, 3].map(async () => exchangeOn(sandbox, { cache: createRedisTokenCache((await connect()).client), fetch: slowFetch(50), onCacheError: (e) => errors.push(e) })),
    );
    const users = ['u1', 'u2', 'u3'];
    const calls = sandbox.stats.tokenCalls;
    const tokens = await Promise.all(instances.flatMap((exchange) => users.flatMap((user) => Array.from({ length: 25 }, () => exchange.getToken(user).then((t) => [user, t.accessToken])))));
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

  test('Redis stopped mid-run: every getToken answers through the service, failures reported without tokens', async () => {
    const own = await startRedis();
    try {
      const { client } = await connect(own.url);
      const reports: TokenCacheErrorInfo[] = [];
      const timeout = 1000;
      const exchange = exchangeOn(sandbox, { cache: createRedisTokenCache(client), timeout, onCacheError: (e) => reports.push(e) });
      const seen: string[] = [];
      let slowest = 0;
      const round = async (n: number) => {
        const results = await Promise.allSettled(
          Array.from({ length: 10 }, async (_, i) => {
            const started = performance.now();
            const token = await exchange.getToken('user-' + ((n + i) % 5), { forceRefresh: i === 9 });
            slowest = Math.max(slowest, performance.now() - started);
            seen.push(token.accessToken);
          }),
        );
        expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
      };
      for (let n = 0; n < 3; n++) await round(n);
      await own.stop();
      for (let n = 3; n < 8; n++) await round(n);
      expect(seen).toHaveLength(80);
      expect(reports.length).toBeGreaterThan(0);
      expect(reports.map((r) => r.operation)).toContain('get');
      const said = JSON.stringify(reports);
      for (const token of new Set(seen)) expect(said).not.toContain(token);
      expect(said).not.toContain(sandbox.credentials.secretKey);
      expect(slowest).toBeLessThan(timeout * 5); // a hang guard; the bench measures the real figure
    } finally {
      await own.stop();
    }
  });

  test('Redis frozen (no answers, connection open): getToken falls back to the service after `timeout`', async () => {
    const own = await startRedis();
    try {
      const { client } = await connect(own.url);
      const reports: TokenCacheErrorInfo[] = [];
      const exchange = exchangeOn(sandbox, { cache: createRedisTokenCache(client), timeout: 300, onCacheError: (e) => reports.push(e) });
      await exchange.getToken('dave');
      own.pause();
      const calls = sandbox.stats.tokenCalls;
      const [a, b] = await Promise.all([exchange.getToken('erin'), exchange.getToken('erin')]);
      expect(a).toEqual(b);
      expect(sandbox.stats.tokenCalls - calls).toBe(1);
      expect(reports.some((r) => r.operation === 'get' && r.reason === 'timeout')).toBe(true);
      own.resume();
    } finally {
      await own.stop();
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
  expect(() => createRedisDedupStore(ioredisShaped as never, { ttlSeconds: 0 })).toThrow(/ttlSeconds must be a whole number of seconds, at least 1 \(e\.g\. 86400\); got 0/);
  expect(() => createRedisDedupStore(ioredisShaped as never, { ttlSeconds: '60' as never })).toThrow(/got "60"/);
  expect(() => createRedisDedupStore(ioredisShaped as never, { ttl: 60 } as never)).toThrow(/unknown createRedisDedupStore\(redis, options\) option "ttl"; did you mean "ttlSeconds"\?/);
});
