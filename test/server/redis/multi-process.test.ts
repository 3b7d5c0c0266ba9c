/**
 * Several backend instances as real processes (the built package, imported by name), each with
 * its own exchange and Redis client, against one sandbox and one redis-server: one token-endpoint
 * call per user, whatever the number of instances and concurrent callers.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startSandbox, type Sandbox } from '../../../src/testing.js';
import { hasRedis, startRedis, type RedisServer } from '../../helpers/redis.js';
import { startInstances, type InstanceResult } from './instances.mjs';

const users = Array.from({ length: 8 }, (_, i) => `user-${i}`);

function expectOneTokenPerUser(results: InstanceResult[]) {
  expect(results.flatMap((r) => r.errors)).toEqual([]);
  expect(results.flatMap((r) => r.cacheErrors)).toEqual([]);
  for (const user of users) expect(new Set(results.flatMap((r) => r.distinct[user])).size).toBe(1);
}

describe.runIf(hasRedis).each(['ioredis', 'redis'])('instances on %s', (client) => {
  let redis: RedisServer;
  let sandbox: Sandbox;
  let shortSandbox: Sandbox;
  beforeAll(async () => {
    [redis, sandbox, shortSandbox] = await Promise.all([startRedis(), startSandbox(), startSandbox({ tokenTtlSeconds: 60 })]);
  });
  afterAll(async () => {
    await Promise.all([redis?.stop(), sandbox?.close(), shortSandbox?.close()]);
  });

  test('3 processes x 8 users x 20 concurrent getToken -> 8 token-endpoint calls, one token per user everywhere', async () => {
    const instances = await startInstances(3, { client, redisUrl: redis.url, baseUrl: sandbox.url, ...sandbox.credentials, latencyMs: 50, prefix: 'mp1:' });
    try {
      const calls = sandbox.stats.tokenCalls;
      expectOneTokenPerUser(await instances.run(users, 20));
      expect(sandbox.stats.tokenCalls - calls).toBe(users.length);
      expectOneTokenPerUser(await instances.run(users, 20)); // and then hits only
      expect(sandbox.stats.tokenCalls - calls).toBe(users.length);
    } finally {
      await instances.close();
    }
  }, 60_000);

  test('60-second tokens across processes: 0 errors, hits after the first call', async () => {
    const instances = await startInstances(2, { client, redisUrl: redis.url, baseUrl: shortSandbox.url, ...shortSandbox.credentials, latencyMs: 20, prefix: 'mp2:' });
    try {
      const calls = shortSandbox.stats.tokenCalls;
      expectOneTokenPerUser(await instances.run(users, 5));
      expectOneTokenPerUser(await instances.run(users, 5));
      expect(shortSandbox.stats.tokenCalls - calls).toBe(users.length);
    } finally {
      await instances.close();
    }
  }, 60_000);
});
