/**
 * A slow Redis, not a frozen one (#30.10): every command answers late (a real redis-server
 * behind a latency proxy), but no single call passes cacheTimeout, so the breaker never opens.
 * Before, a new user's getToken made three such calls in a row (read, lock, read again): with the
 * defaults and 150 ms per command it took 476-671 ms. Now the cache calls of one getToken share
 * one budget, cacheTimeout: past it, the service is asked without the rest. The test runs 250 ms
 * per command against a 400 ms cacheTimeout, the same ratio with room for a loaded machine
 * (150 ms against 200 leaves a single call 50 ms, which a busy event loop eats).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createRedisTokenCache, createTokenExchange, type TokenCacheErrorInfo } from '../../../src/server-node.js';
import { startSandbox, type Sandbox } from '../../../src/testing.js';
import { startLatencyProxy, type LatencyProxy } from '../../helpers/latency-proxy.js';
import { hasRedis, startRedis, type RedisServer } from '../../helpers/redis.js';
import { clientKinds, type ConnectedClient } from './clients.js';

const DELAY_MS = 250;
const CACHE_TIMEOUT_MS = 400;
// The budget (400 ms), one token call to a local sandbox, and slack for a loaded machine; the
// three calls in a row took at least 750 ms before.
const NEW_USER_MS = 650;

describe.runIf(hasRedis).each(clientKinds)('$name through a proxy that delays every answer 250 ms', (kind) => {
  let redis: RedisServer;
  let proxy: LatencyProxy;
  let sandbox: Sandbox;
  let client: ConnectedClient;
  beforeAll(async () => {
    [redis, sandbox] = await Promise.all([startRedis(), startSandbox()]);
    proxy = await startLatencyProxy(redis, DELAY_MS);
    client = await kind.connect(proxy.url);
  });
  afterAll(async () => {
    await client?.close();
    await proxy?.close();
    await Promise.all([redis?.stop(), sandbox?.close()]);
  });

  test('cacheTimeout 400: a new user getToken within the 400 ms budget plus the token call (3 users, one after another), a cached user from Redis, the breaker never opens', async () => {
    const reports: TokenCacheErrorInfo[] = [];
    const exchange = createTokenExchange({
      baseUrl: sandbox.url,
      ...sandbox.credentials,
      cacheTimeout: CACHE_TIMEOUT_MS,
      cache: createRedisTokenCache(client.client),
      onCacheError: (info) => void reports.push(info),
    });
    await exchange.getToken('warm-up'); // the first token call of a process pays for loading code
    const took: number[] = [];
    for (const user of ['new-1', 'new-2', 'new-3']) {
      const started = performance.now();
      await exchange.getToken(user);
      took.push(Math.round(performance.now() - started));
    }
    expect({ took, over: took.filter((ms) => ms >= NEW_USER_MS) }).toEqual({ took, over: [] });
    // The token stored (in the background, late) answers the next call from Redis.
    await expect.poll(() => client.raw.keys('channel-sdk:token:*')).toHaveLength(4);
    const calls = sandbox.stats.tokenCalls;
    await exchange.getToken('new-1');
    expect(sandbox.stats.tokenCalls - calls).toBe(0);
    // Slow, not failing: never a cool-down.
    expect(reports.filter((r) => r.skipMs > 0)).toEqual([]);
  });
});
