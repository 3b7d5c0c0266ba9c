/**
 * The inbox at Redis's own limits (issue #43, eighth round).
 */
import { afterEach, describe, expect, test } from 'vitest';
import { createRedisInbox, createWebhookHandler, type InboxErrorInfo } from '../../../../src/server-node.js';
import { hasRedis, startRedis, type RedisServer } from '../../../helpers/redis.js';
import { clientKinds, type ConnectedClient } from '../../redis/clients.js';
import { bodyOf, post, sleep, snapshot, until, webhookSecret } from './inbox-helpers.js';

describe.runIf(hasRedis)('the inbox at Redis limits', () => {
  const cleanup: Array<() => Promise<unknown> | void> = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).toReversed()) await step();
  });
  async function setUp(kind: (typeof clientKinds)[number], args: string[] = []): Promise<{ redis: RedisServer; client: ConnectedClient }> {
    const redis = await startRedis({ args });
    cleanup.push(() => redis.stop());
    const client = await kind.connect(redis.url);
    cleanup.push(() => client.close());
    return { redis, client };
  }

  describe.each([clientKinds[0], clientKinds[2]])('$name', (kind) => {
    // A write sent again after a late answer queued behind the first, ran after it and answered "no
    // longer yours": before, the dead letter and the callback's error went unreported (nothing at all),
    // and a processed push was reported as finished by another worker.
    test('Redis stalls past timeoutMs (SIGSTOP here: a fork, a failover CLIENT PAUSE) while a failed push is put aside: its dead letter is still reported, with its id', async () => {
      const { redis, client } = await setUp(kind);
      const inbox = createRedisInbox(client.client, { pollMs: 10, timeoutMs: 300, leaseMs: 3000, maxAttempts: 1, prefix: 'late-fail:' });
      const handler = createWebhookHandler({ secret: webhookSecret, inbox, onError: () => {} });
      expect((await post(handler, bodyOf(snapshot('SO-late', '2024-06-01T12:00:00+08:00')))).status).toBe(202);
      const reports: Array<[string, InboxErrorInfo]> = [];
      const worker = inbox.process({
        onError: (error, info) => void reports.push([(error as Error).message, info]),
        onLogisticsUpdated: () => {
          redis.pause();
          setTimeout(() => redis.resume(), 800);
          throw new Error('boom');
        },
      });
      cleanup.push(() => worker.close());
      await until(
        () =>
          inbox.stats().then(
            (s) => s.deadLetters === 1,
            () => false,
          ),
        'the dead letter',
        10_000,
      );
      await sleep(1500);
      const [dead] = await inbox.deadLetters();
      expect(reports.filter(([, info]) => info.stage === 'dead-letter').map(([, info]) => info.id)).toEqual([dead.id]);
    });

    test('Redis stalls past timeoutMs while a processed push is stored: no report that another worker finished it', async () => {
      const { redis, client } = await setUp(kind);
      const inbox = createRedisInbox(client.client, { pollMs: 10, timeoutMs: 300, leaseMs: 3000, prefix: 'late-done:' });
      const handler = createWebhookHandler({ secret: webhookSecret, inbox, onError: () => {} });
      expect((await post(handler, bodyOf(snapshot('SO-late-done', '2024-06-01T12:00:00+08:00')))).status).toBe(202);
      const reports: string[] = [];
      let runs = 0;
      const worker = inbox.process({
        onError: (_error, info) => void reports.push(info.stage),
        onLogisticsUpdated: () => {
          runs++;
          redis.pause();
          setTimeout(() => redis.resume(), 800);
        },
      });
      cleanup.push(() => worker.close());
      await until(
        () =>
          inbox.stats().then(
            (s) => s.pending + s.processing === 0,
            () => false,
          ),
        'the push to be processed',
        10_000,
      );
      await sleep(1500);
      expect(runs).toBe(1);
      expect(reports).not.toContain('lease');
    });
  });
});
