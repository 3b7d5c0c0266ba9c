/**
 * The inbox at Redis's own limits (issue #43, eighth round).
 */
import { afterEach, describe, expect, test } from 'vitest';
import { createRedisDedupStore, createRedisInbox, createWebhookHandler, type InboxErrorInfo } from '../../../../src/server-node.js';
import { hasRedis, startRedis, type RedisServer } from '../../../helpers/redis.js';
import { Redis } from 'ioredis';
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
    // One read's answer (up to `concurrency` bodies) past Redis's client-output-buffer-limit cuts the
    // connection. Before: ioredis sent the read again, which took nothing (what the first took was
    // held, unseen, for a lease), and each lease later the same, an attempt counted each time, until
    // the pushes became dead letters that never ran ("worker died"), with not one report.
    test('an answer past client-output-buffer-limit (normal 1mb) cuts the connection: the worker frees what that read took, reads fewer at a time, and every push runs at attempt 1', async () => {
      const { client } = await setUp(kind, ['--client-output-buffer-limit', 'normal 1mb 0 0']);
      const inbox = createRedisInbox(client.client, { pollMs: 10, prefix: 'cut:' });
      const handler = createWebhookHandler({ secret: webhookSecret, inbox, onError: () => {} });
      const orders = ['SO-cut-1', 'SO-cut-2', 'SO-cut-3', 'SO-cut-4'];
      for (const order of orders) expect((await post(handler, bodyOf(snapshot(order, '2024-06-01T12:00:00+08:00', 'x'.repeat(400_000))))).status).toBe(202);
      const runs: string[] = [];
      const stages: string[] = [];
      const worker = inbox.process({
        concurrency: 4,
        onError: (_error, info) => void stages.push(info.stage),
        onLogisticsUpdated: ({ logistics }, { attempt }) => void runs.push(logistics.order_no + '#' + attempt),
      });
      cleanup.push(() => worker.close());
      await until(() => runs.length === 4, 'the four pushes to run', 10_000);
      expect(runs.toSorted()).toEqual(orders.map((order) => order + '#1'));
      expect(stages).toContain('redis');
      expect(await inbox.stats()).toMatchObject({ pending: 0, processing: 0, deadLetters: 0 });
    });

    // One body alone past client-output-buffer-limit: every read that takes it is cut, however few it
    // reads at a time. Before: it was freed without an attempt and taken again, read after read, for
    // good; the pushes behind it never ran and it never became a dead letter.
    test('one body alone past client-output-buffer-limit (normal 1mb): the pushes beside it run, and it becomes a dead letter that says why', async () => {
      const { client } = await setUp(kind, ['--client-output-buffer-limit', 'normal 1mb 0 0']);
      const inbox = createRedisInbox(client.client, { pollMs: 10, prefix: 'huge:', maxAttempts: 3, retryDelayMs: () => 0 });
      const handler = createWebhookHandler({ secret: webhookSecret, inbox, maxBodyBytes: 4 * 1024 * 1024, onError: () => {} });
      expect((await post(handler, bodyOf(snapshot('SO-huge', '2024-06-01T12:00:00+08:00', 'x'.repeat(1_500_000))))).status).toBe(202);
      for (const order of ['SO-small-1', 'SO-small-2']) expect((await post(handler, bodyOf(snapshot(order, '2024-06-01T12:00:00+08:00')))).status).toBe(202);
      const runs: string[] = [];
      const reports: string[] = [];
      const worker = inbox.process({
        concurrency: 4,
        onError: (error, info) => void reports.push(info.stage + ': ' + String(error)),
        onLogisticsUpdated: ({ logistics }) => void runs.push(logistics.order_no),
      });
      cleanup.push(() => worker.close());
      // The worker's own client is cut too: a stats() call may fail meanwhile.
      const deadLetters = () =>
        inbox.stats().then(
          (stats) => stats.deadLetters,
          () => 0,
        );
      await until(async () => (await deadLetters()) === 1, 'the huge push to become a dead letter', 20_000);
      await until(() => runs.length === 2, 'the small pushes to run', 10_000);
      expect(runs.toSorted()).toEqual(['SO-small-1', 'SO-small-2']);
      const [dead] = await inbox.deadLetters();
      expect(dead.error).toMatch(/client-output-buffer-limit/);
      expect(reports.some((line) => line.startsWith('dead-letter'))).toBe(true);
      expect(await inbox.stats()).toMatchObject({ pending: 0, processing: 0, retrying: 0 });
    }, 30_000);

    // ttlSeconds is how long a processed push is remembered; a queued one is a repeat for as long as it waits.
    test('a push queued longer than ttlSeconds (every worker paused, or none running): its repeat is still a duplicate, stored and run once', async () => {
      const { client } = await setUp(kind);
      const inbox = createRedisInbox(client.client, { pollMs: 10, prefix: 'ttl:', ttlSeconds: 1 });
      const handler = createWebhookHandler({ secret: webhookSecret, inbox, onError: () => {} });
      const body = bodyOf(snapshot('SO-ttl', '2024-06-01T12:00:00+08:00'));
      expect((await post(handler, body)).status).toBe(202);
      await sleep(2200);
      expect(await post(handler, body)).toMatchObject({ status: 200 });
      const runs: string[] = [];
      const worker = inbox.process({ onError: () => {}, onLogisticsUpdated: ({ logistics }) => void runs.push(logistics.order_no) });
      cleanup.push(() => worker.close());
      await until(() => runs.length === 1, 'the push to run');
      await sleep(300);
      expect(runs).toEqual(['SO-ttl']);
    });

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

  // ioredis with enableOfflineQueue: false refuses every command until it is connected: before, the
  // first push a process took was answered 503 and each worker's first read failed with a warning.
  test.each([
    ['lazyConnect', { lazyConnect: true }],
    ['still connecting', {}],
  ])('ioredis with enableOfflineQueue: false, %s: the first push is stored (202) and runs, with no Redis warning', async (_name, options) => {
    const redis = await startRedis();
    cleanup.push(() => redis.stop());
    const client = new Redis(redis.url, { ...options, enableOfflineQueue: false });
    client.on('error', () => {});
    cleanup.push(() => client.disconnect());
    const inbox = createRedisInbox(client, { pollMs: 10, prefix: 'cold:' });
    const handler = createWebhookHandler({ secret: webhookSecret, inbox, onError: () => {} });
    expect((await post(handler, bodyOf(snapshot('SO-cold', '2024-06-01T12:00:00+08:00')))).status).toBe(202);
    const coldClient = new Redis(redis.url, { ...options, enableOfflineQueue: false });
    coldClient.on('error', () => {});
    cleanup.push(() => coldClient.disconnect());
    const stages: string[] = [];
    const runs: string[] = [];
    const worker = createRedisInbox(coldClient, { pollMs: 10, prefix: 'cold:' }).process({
      onError: (_error, info) => void stages.push(info.stage),
      onLogisticsUpdated: ({ logistics }) => void runs.push(logistics.order_no),
    });
    cleanup.push(() => worker.close());
    await until(() => runs.length === 1, 'the run');
    expect(stages).toEqual([]);
  });

  test('ioredis with enableOfflineQueue: false and lazyConnect under the dedup store: the first push is claimed and completed, with no dedup warning, and its repeat does not run again (before: it ran twice)', async () => {
    const redis = await startRedis();
    cleanup.push(() => redis.stop());
    const client = new Redis(redis.url, { lazyConnect: true, enableOfflineQueue: false });
    client.on('error', () => {});
    cleanup.push(() => client.disconnect());
    const stages: string[] = [];
    let runs = 0;
    const handler = createWebhookHandler({
      secret: webhookSecret,
      dedup: createRedisDedupStore(client),
      onError: (_error, info) => void stages.push(info.stage),
      onLogisticsUpdated: () => void runs++,
    });
    const body = bodyOf(snapshot('SO-cold-dedup', '2024-06-01T12:00:00+08:00'));
    expect((await post(handler, body)).status).toBe(200);
    expect((await post(handler, body)).status).toBe(200);
    expect(runs).toBe(1);
    expect(stages).not.toContain('dedup');
  });
});
