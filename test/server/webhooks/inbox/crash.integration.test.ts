/**
 * The inbox across real processes on a real redis-server (issue #33): a worker SIGKILLed
 * mid-callback, and the same push delivered to two receiver processes at once. The processes are
 * inbox-instance.mjs over the built package; their callbacks log each run to Redis.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createRedisInbox, createWebhookHandler } from '../../../../src/server-node.js';
import { startSandbox, type Sandbox } from '../../../../src/testing.js';
import { hasRedis, startRedis, type RedisServer } from '../../../helpers/redis.js';
import { bodyOf, post, snapshot, until, webhookSecret } from './inbox-helpers.js';
import { readLog, startInboxProcess, type InboxProcess } from './inbox-processes.mjs';

const inboxOptions = { pollMs: 20, leaseMs: 1500, timeoutMs: 500 };

describe.runIf(hasRedis)('the inbox across processes', () => {
  let redis: RedisServer;
  let raw: Redis;
  let sandbox: Sandbox;
  beforeAll(async () => {
    [redis, sandbox] = await Promise.all([startRedis(), startSandbox({ webhookSecret })]);
    raw = new Redis(redis.url);
  });
  afterAll(async () => {
    raw?.disconnect();
    await Promise.all([redis?.stop(), sandbox?.close()]);
  });

  /** The dedupKeys of the pushes held (taken by a worker, outcome not stored yet). */
  const heldBy = async (prefix: string) => {
    const stream = '{' + prefix + 'inbox}:stream';
    const pending = (await raw.xpending(stream, 'workers', '-', '+', 1000)) as Array<[string, string, number, number]>;
    const keys = await Promise.all(pending.map(async ([id]) => ((await raw.xrange(stream, id, id))[0][1] as string[])[1]));
    return keys;
  };

  test('a worker SIGKILLed mid-callback: 0 pushes lost; its pushes in flight run again on the other worker after the lease, and only those', async () => {
    const prefix = 'crash-kill:';
    const inbox = createRedisInbox(raw, { prefix, ...inboxOptions });
    const handler = createWebhookHandler({ secret: webhookSecret, inbox });
    const total = 60;
    for (let i = 0; i < total; i++) expect((await post(handler, bodyOf(snapshot('SO-kill-' + i, '2024-06-01T12:00:00+08:00')))).status).toBe(202);
    const processes: InboxProcess[] = [];
    try {
      const work = { concurrency: 5, callbackMs: 200 };
      const doomed = await startInboxProcess({ client: 'ioredis', redisUrl: redis.url, prefix, inboxOptions, work });
      processes.push(doomed);
      // Killed once it is mid-callback: some of its runs started and not ended.
      const inFlight = async () => {
        const { byKey } = await readLog((...a) => raw.lrange(...a), prefix);
        return [...byKey].filter(([, runs]) => runs.starts.includes(doomed.pid) && !runs.ends.includes(doomed.pid)).map(([key]) => key);
      };
      await until(
        async () => (await readLog((...a) => raw.lrange(...a), prefix)).lines.length >= 12 && (await inFlight()).length > 0,
        'the first worker mid-callback',
      );
      await doomed.kill();
      // In flight at the kill: what it held in Redis (taken, outcome not stored), started or not.
      const held = await heldBy(prefix);
      expect((await inFlight()).filter((key) => !held.includes(key))).toEqual([]);
      const survivor = await startInboxProcess({ client: 'redis', redisUrl: redis.url, prefix, inboxOptions, work });
      processes.push(survivor);
      await until(
        async () => [...(await readLog((...a) => raw.lrange(...a), prefix)).byKey.values()].filter((r) => r.ends.length > 0).length === total,
        'every push to be processed',
      );
      const { byKey } = await readLog((...a) => raw.lrange(...a), prefix);
      const lost = total - [...byKey.values()].filter((runs) => runs.ends.length > 0).length;
      const twice = [...byKey].filter(([, runs]) => runs.starts.length > 1).map(([key]) => key);
      expect({ lost, twiceOutsideInFlight: twice.filter((key) => !held.includes(key)) }).toEqual({ lost: 0, twiceOutsideInFlight: [] });
      expect(twice.length).toBeGreaterThan(0);
      for (const key of held) expect(byKey.get(key)!.ends.at(-1)).toBe(survivor.pid);
      await until(async () => (await inbox.stats()).processing === 0, 'nothing held');
      expect(await inbox.stats()).toMatchObject({ pending: 0, processing: 0, retrying: 0, deadLetters: 0, oldestMs: 0, paused: false });
    } finally {
      await Promise.all(processes.map((p) => p.close()));
    }
  });

  test('the same push delivered to two receiver processes at once: both acknowledged, stored once, run once', async () => {
    const prefix = 'crash-twice:';
    const receivers = await Promise.all(
      ['ioredis', 'redis'].map((client) => startInboxProcess({ client, redisUrl: redis.url, prefix, inboxOptions, serve: webhookSecret })),
    );
    const worker = await startInboxProcess({ client: 'ioredis-v5', redisUrl: redis.url, prefix, inboxOptions, work: { concurrency: 4 } });
    try {
      for (let i = 0; i < 10; i++) {
        const logistics = snapshot('SO-twice-' + i, '2024-06-01T12:00:00+08:00');
        const answers = await Promise.all(receivers.map((r) => sandbox.pushLogistics(logistics, { url: r.url! })));
        expect(answers.map((a) => a.ok)).toEqual([true, true]);
        expect(answers.map((a) => a.status).toSorted()).toEqual([200, 202]);
      }
      await until(async () => (await readLog((...a) => raw.lrange(...a), prefix)).lines.length === 20, '10 runs');
      const { byKey } = await readLog((...a) => raw.lrange(...a), prefix);
      expect([...byKey.values()].map((runs) => runs.starts.length)).toEqual(Array(10).fill(1));
    } finally {
      await Promise.all([...receivers, worker].map((p) => p.close()));
    }
  });
});
