/**
 * Several backend instances as real processes (the built package, imported by name), each with
 * its own exchange and Redis client, against one sandbox and one redis-server: one token-endpoint
 * call per user, whatever the number of instances and concurrent callers.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startSandbox, type Sandbox } from '../../../src/testing.js';
import { hasRedis, startRedis, type RedisServer } from '../../helpers/redis.js';
import { startInstances, type InstanceResult, type StreamResult } from './instances.mjs';

const users = Array.from({ length: 8 }, (_, i) => `user-${i}`);
// The default cacheTimeout (200 ms) plus generous slack for a shared machine (it was 10 s).
const BOUND_MS = 1500;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
// Tests that count token calls give the cache a generous bound, so that a shared machine's CPU
// stalls do not open the breaker; the fault tests check the default bound.
const counting = { cacheTimeout: 2000 };

/** Slowest call of each kind, and the errors, across instances. */
function summary(results: StreamResult[]) {
  const calls = results.flatMap((r) => r.calls);
  const slowest = Object.fromEntries(
    ['new', 'cached', 'forced'].map((kind) => [kind, Math.round(Math.max(0, ...calls.filter((c) => c.kind === kind).map((c) => c.ms)))]),
  );
  return { calls: calls.length, errors: results.flatMap((r) => r.errors), slowest };
}

/** `total` forced GETs of one user's token, spread over `urls` in turn, 10 at a time: the tokens answered. */
async function forcedGets(urls: string[], total: number): Promise<{ tokens: Set<string>; failed: number[] }> {
  const tokens = new Set<string>();
  const failed: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (next < total) {
        const response = await fetch(urls[next++ % urls.length] + '/channel-token?force=1', { headers: { 'x-user': 'heavy-user' } });
        const body = (await response.json()) as { access_token?: string };
        if (response.status === 200 && body.access_token) tokens.add(body.access_token);
        else failed.push(response.status);
      }
    }),
  );
  return { tokens, failed };
}

/** True when the sandbox accepts `token` on a data call. */
async function accepted(sandbox: Sandbox, token: string): Promise<boolean> {
  const response = await fetch(sandbox.url + '/open/api/v1/sdk/orders', { headers: { authorization: 'Bearer ' + token } });
  await response.body?.cancel();
  return response.status === 200;
}

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
    const instances = await startInstances(3, {
      client,
      redisUrl: redis.url,
      baseUrl: sandbox.url,
      ...sandbox.credentials,
      latencyMs: 50,
      prefix: 'mp1:',
      exchangeOptions: counting,
    });
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

  test('forced refreshes: 300 GET ?force=1 by one user, 10 at a time, round robin over 4 processes sharing Redis -> < 30 token-endpoint calls, every answer a token the service accepts', async () => {
    const instances = await startInstances(4, {
      client,
      redisUrl: redis.url,
      baseUrl: sandbox.url,
      ...sandbox.credentials,
      latencyMs: 20,
      prefix: 'mp3:',
      route: true,
      exchangeOptions: counting,
    });
    try {
      const calls = sandbox.stats.tokenCalls;
      const { tokens, failed } = await forcedGets(
        instances.ports.map((port) => `http://127.0.0.1:${port}`),
        300,
      );
      expect(failed).toEqual([]);
      expect(sandbox.stats.tokenCalls - calls).toBeLessThan(30);
      for (const token of tokens) expect(await accepted(sandbox, token)).toBe(true);
    } finally {
      await instances.close();
    }
  }, 60_000);

  test('60-second tokens across processes: 0 errors, hits after the first call', async () => {
    const instances = await startInstances(2, {
      client,
      redisUrl: redis.url,
      baseUrl: shortSandbox.url,
      ...shortSandbox.credentials,
      latencyMs: 20,
      prefix: 'mp2:',
      exchangeOptions: counting,
    });
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

describe.runIf(hasRedis).each(['ioredis', 'ioredis-v5', 'redis', 'redis-v5', 'redis-v4'])('cache faults, 2 processes on %s', (client) => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox();
  });
  afterAll(async () => {
    await sandbox?.close();
  });
  const warm = Array.from({ length: 6 }, (_, i) => `warm-${i}`);

  test.each(['frozen (SIGSTOP)', 'stopped (SIGTERM)'])(
    'Redis %s mid-run, default options: every getToken (new users, cached users, forced refreshes) within the cache bound, 0 errors',
    async (fault) => {
      const redis = await startRedis();
      const instances = await startInstances(2, { client, redisUrl: redis.url, baseUrl: sandbox.url, ...sandbox.credentials });
      try {
        const warmed = await instances.run(warm, 2);
        expect(warmed.flatMap((r) => r.errors)).toEqual([]);
        await sleep(100); // the stores land
        const streaming = instances.stream({ warm, durationMs: 1500, intervalMs: 50 });
        await sleep(500);
        if (fault.startsWith('frozen')) redis.pause();
        else await redis.stop();
        const result = summary(await streaming);
        expect(result.errors).toEqual([]);
        expect(result.calls).toBeGreaterThan(30);
        expect(result.slowest).toEqual({ new: expect.any(Number), cached: expect.any(Number), forced: expect.any(Number) });
        expect(Object.values(result.slowest).filter((ms) => ms >= BOUND_MS)).toEqual([]);
      } finally {
        redis.resume();
        await instances.close();
        await redis.stop();
      }
    },
    60_000,
  );
});
