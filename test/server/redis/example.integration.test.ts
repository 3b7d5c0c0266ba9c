/**
 * examples/redis-token-cache.ts, as the README shows it: run against the sandbox and a real
 * redis-server, and type-checked against the built package as a user's project would see it.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startSandbox, type Sandbox } from '../../../src/testing.js';
import { hasRedis, startRedis, type RedisServer } from '../../helpers/redis.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const example = 'examples/redis-token-cache.ts';

describe.runIf(hasRedis)('examples/redis-token-cache.ts', () => {
  let redis: RedisServer;
  let sandbox: Sandbox;
  beforeAll(async () => {
    [redis, sandbox] = await Promise.all([startRedis(), startSandbox()]);
    Object.assign(process.env, {
      REDIS_URL: redis.url,
      CHANNEL_BASE_URL: sandbox.url,
      CHANNEL_ACCESS_KEY: sandbox.credentials.accessKey,
      CHANNEL_SECRET_KEY: sandbox.credentials.secretKey,
    });
  });
  afterAll(async () => {
    await Promise.all([redis?.stop(), sandbox?.close()]);
  });

  test('runs: tokens are shared through Redis under the prefix', async () => {
    // By path at run time: the example imports the built package, which `npm run typecheck` precedes.
    const app = (await import(/* @vite-ignore */ root + example)) as {
      exchange: { getToken(user: string): Promise<object> };
      redis: { keys(pattern: string): Promise<string[]>; disconnect(): void };
    };
    try {
      const first = await app.exchange.getToken('user-1');
      await expect.poll(() => app.redis.keys('myapp:channel:*')).toHaveLength(1);
      expect(await app.exchange.getToken('user-1')).toEqual(first);
      expect(sandbox.stats.tokenCalls).toBe(1);
    } finally {
      app.redis.disconnect();
    }
  });
});

test('type-checks against the built package (strict, NodeNext, as in a user project)', async () => {
  const tsc = root + 'node_modules/typescript/bin/tsc';
  const args = [
    '--ignoreConfig',
    '--noEmit',
    '--strict',
    '--module',
    'nodenext',
    '--moduleResolution',
    'nodenext',
    '--target',
    'es2022',
    '--types',
    'node',
    '--skipLibCheck',
    example,
  ];
  const { stdout } = await promisify(execFile)(process.execPath, [tsc, ...args], { cwd: root }).catch((error: { stdout: string }) => error);
  expect(stdout).toBe('');
});
