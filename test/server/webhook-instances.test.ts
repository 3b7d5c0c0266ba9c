/**
 * A push delivered to two instances runs the callback once: two backend processes (the built
 * package), each with its own handler and Redis client, sharing one redis-server through
 * createRedisDedupStore, pushed to by the sandbox.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/testing.js';
import { hasRedis, startRedis, type RedisServer } from '../helpers/redis.js';
import { sampleLogistics } from './helpers.js';

const secret = 'whsec_instances';

interface Instance {
  url: string;
  set(state: { fail?: boolean; delayMs?: number }): void;
  report(): Promise<{ calls: number; stages: string[] }>;
  close(): Promise<void>;
}

async function startInstance(redisUrl: string, prefix: string): Promise<Instance> {
  const child: ChildProcess = fork(new URL('./webhook-instance.mjs', import.meta.url), [redisUrl, secret, prefix], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const { port } = await new Promise<{ port: number }>((resolve) => child.once('message', resolve as never));
  return {
    url: `http://127.0.0.1:${port}/webhooks/channel`,
    set: (state) => void child.send({ set: state }),
    report: () => new Promise((resolve) => (child.once('message', resolve as never), child.send({ report: true }))),
    close: () => new Promise((resolve) => (child.once('exit', () => resolve()), child.send({ close: true }))),
  };
}

describe.runIf(hasRedis)('webhook dedup across instances (real redis-server, two processes)', () => {
  let redis: RedisServer;
  let sandbox: Sandbox;
  let a: Instance;
  let b: Instance;
  let order = 0;
  // A fresh order number per test, so that each starts from a push never seen.
  const push = () => ({ ...sampleLogistics, order_no: `SO-instances-${order}` });
  beforeAll(async () => {
    [redis, sandbox] = await Promise.all([startRedis(), startSandbox({ webhookSecret: secret })]);
    [a, b] = await Promise.all([startInstance(redis.url, 'hooks:'), startInstance(redis.url, 'hooks:')]);
  }, 30_000);
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await Promise.all([redis?.stop(), sandbox?.close()]);
  });
  beforeEach(() => {
    order++;
  });

  test('the same push to both instances at once -> both 200, the callback ran once', async () => {
    a.set({ delayMs: 50 });
    b.set({ delayMs: 50 });
    const logistics = push();
    const results = await Promise.all([sandbox.pushLogistics(logistics, { url: a.url }), sandbox.pushLogistics(logistics, { url: b.url })]);
    expect(results.map((r) => r.status)).toEqual([200, 200]);
    const reports = await Promise.all([a.report(), b.report()]);
    expect(reports[0].calls + reports[1].calls).toBe(1);
    expect([...reports[0].stages, ...reports[1].stages]).toEqual(['duplicate']);
  });

  test('a redelivery to the other instance later -> 200, no second callback', async () => {
    const logistics = push();
    expect((await sandbox.pushLogistics(logistics, { url: a.url })).status).toBe(200);
    expect((await sandbox.pushLogistics(logistics, { url: b.url })).status).toBe(200);
    expect([(await a.report()).calls, (await b.report()).calls]).toEqual([1, 0]);
  });

  test('the callback failed on one instance -> 500, and the redelivery to the other is processed', async () => {
    a.set({ fail: true, delayMs: 0 });
    const logistics = push();
    expect((await sandbox.pushLogistics(logistics, { url: a.url })).status).toBe(500);
    expect((await sandbox.pushLogistics(logistics, { url: b.url })).status).toBe(200);
    expect([(await a.report()).calls, (await b.report()).calls]).toEqual([1, 1]);
  });

  test('Redis stopped: pushes are still processed (fail open) and the dedup failure reported', async () => {
    await redis.stop();
    // Within the sandbox's 8-second window (else no status): dedupTimeoutMs is 300 here.
    const result = await sandbox.pushLogistics(push(), { url: a.url });
    expect(result.status).toBe(200);
    const report = await a.report();
    expect(report.calls).toBe(1);
    expect(report.stages).toContain('dedup');
  });
});
