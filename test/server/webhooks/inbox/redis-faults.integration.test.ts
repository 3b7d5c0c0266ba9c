/**
 * The inbox when Redis misbehaves (issue #33): frozen (SIGSTOP) between verify and append,
 * stopped, restarted without persistence (its data gone) and with persistence (AOF). A push is
 * acknowledged only once it is stored, answers stay inside the service's 8-second window, and
 * nothing wedges.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import { createRedisInbox, createWebhookHandler, signWebhookBody, toNodeHandler, type InboxErrorInfo, type WebhookInbox } from '../../../../src/server-node.js';
import { hasRedis, startRedis, type RedisServer } from '../../../helpers/redis.js';
import { clientKinds, type ConnectedClient } from '../../redis/clients.js';
import { bodyOf, post, sleep, snapshot, until, webhookSecret } from './inbox-helpers.js';

const fast = { pollMs: 10, leaseMs: 1500, timeoutMs: 500 };
// The service waits 8 s; the handler's own bound is inboxTimeoutMs (1 s here), with slack for a loaded machine.
const WINDOW_MS = 4000;

describe.runIf(hasRedis)('the inbox when Redis misbehaves', () => {
  const cleanup: Array<() => Promise<unknown> | void> = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).toReversed()) await step();
  });
  async function setUp(kind: (typeof clientKinds)[number], persist = false): Promise<{ redis: RedisServer; client: ConnectedClient }> {
    const redis = await startRedis({ persist });
    cleanup.push(() => redis.stop());
    const client = await kind.connect(redis.url);
    cleanup.push(() => client.close());
    return { redis, client };
  }

  describe.each([clientKinds[0], clientKinds[2]])('$name', (kind) => {
    test('Redis frozen (SIGSTOP) between verify and append: 503 inside the window; once it thaws the push is stored once, the redelivery is acknowledged as a duplicate, it runs once', async () => {
      const { redis, client } = await setUp(kind);
      const inbox = createRedisInbox(client.client, { ...fast, prefix: 'frozen:' });
      // Freezes Redis after the handler verified and checked the push, right before the append.
      const freezing: WebhookInbox = { append: (push) => (redis.pause(), inbox.append(push)) };
      const errors: string[] = [];
      const handler = createWebhookHandler({ secret: webhookSecret, inbox: freezing, inboxTimeoutMs: 1000, onError: (_e, i) => void errors.push(i.stage) });
      const body = bodyOf(snapshot('SO-frozen', '2024-06-01T12:00:00+08:00'));
      const started = performance.now();
      const first = await post(handler, body);
      const ms = performance.now() - started;
      expect(first.status).toBe(503);
      expect(ms).toBeLessThan(WINDOW_MS);
      expect(errors).toEqual(['inbox']);
      redis.resume();
      // The append sent before the freeze runs when Redis thaws: the service's redelivery finds it stored.
      const plain = createWebhookHandler({ secret: webhookSecret, inbox, onError: () => {} });
      await until(async () => (await post(plain, body)).status === 200, 'the redelivery to be a duplicate', 10_000);
      const runs: string[] = [];
      const worker = inbox.process({ onLogisticsUpdated: ({ logistics }) => void runs.push(logistics.order_no) });
      cleanup.push(() => worker.close());
      await until(() => runs.length === 1, 'the run');
      await sleep(100);
      expect(runs).toEqual(['SO-frozen']);
    });

    test('Redis stalled just past timeoutMs during a read: the pushes that read took run at once, not a lease later, and count no attempt (maxAttempts 1: no dead letter)', async () => {
      const { redis, client } = await setUp(kind);
      // The default lease: the pushes a lost read took would wait 30 s.
      const inbox = createRedisInbox(client.client, { pollMs: 10, timeoutMs: 500, maxAttempts: 1, prefix: 'stall:' });
      const handler = createWebhookHandler({ secret: webhookSecret, inbox, onError: () => {} });
      const orders = ['SO-stall-1', 'SO-stall-2', 'SO-stall-3', 'SO-stall-4'];
      for (const order of orders) expect((await post(handler, bodyOf(snapshot(order, '2024-06-01T12:00:00+08:00')))).status).toBe(202);
      const runs: string[] = [];
      const stages: string[] = [];
      redis.pause();
      // The worker's first read waits on the frozen Redis, past timeoutMs; Redis runs it once thawed.
      const worker = inbox.process({
        concurrency: 4,
        onError: (_error, info) => void stages.push(info.stage),
        onLogisticsUpdated: ({ logistics }, { attempt }) => void runs.push(logistics.order_no + '#' + attempt),
      });
      cleanup.push(() => worker.close());
      await sleep(800);
      redis.resume();
      await until(() => runs.length === 4, 'the four pushes to run', 5000);
      expect(runs.toSorted()).toEqual(orders.map((order) => order + '#1'));
      expect(stages).toContain('redis');
      expect(stages).not.toContain('dead-letter');
      expect(await inbox.stats()).toMatchObject({ pending: 0, processing: 0, deadLetters: 0 });
    });

    test('a worker closed while its read waits on a stalled Redis frees what that read took: another worker runs them at once, attempt 1', async () => {
      const { redis, client } = await setUp(kind);
      const inbox = createRedisInbox(client.client, { pollMs: 10, timeoutMs: 500, maxAttempts: 1, prefix: 'stall-close:' });
      const handler = createWebhookHandler({ secret: webhookSecret, inbox, onError: () => {} });
      const orders = ['SO-stall-close-1', 'SO-stall-close-2', 'SO-stall-close-3'];
      for (const order of orders) expect((await post(handler, bodyOf(snapshot(order, '2024-06-01T12:00:00+08:00')))).status).toBe(202);
      redis.pause();
      const first = inbox.process({ concurrency: 4, onError: () => {}, onLogisticsUpdated: () => {} });
      await sleep(100);
      const closed = first.close();
      await sleep(500);
      redis.resume();
      await closed;
      const runs: string[] = [];
      const second = inbox.process({ concurrency: 4, onLogisticsUpdated: ({ logistics }, { attempt }) => void runs.push(logistics.order_no + '#' + attempt) });
      cleanup.push(() => second.close());
      await until(() => runs.length === 3, 'the three pushes to run', 5000);
      expect(runs.toSorted()).toEqual(orders.map((order) => order + '#1'));
    });

    test('Redis frozen while pushes keep coming: the bodies the Redis client holds (appends Redis has not answered) count against maxBufferedBytes, so no more than it is ever held; once Redis thaws pushes are stored again', async () => {
      const { redis, client } = await setUp(kind);
      // The bodies the Redis client holds: sent in a command Redis has not answered (ioredis and
      // node-redis keep each command, its arguments with it, until its reply).
      let outstanding = 0;
      let peak = 0;
      const io = client.client as unknown as { eval(...args: unknown[]): Promise<unknown> };
      const send = io.eval.bind(io);
      io.eval = (...args) => {
        // ioredis: eval(script, n, ...keys, ...args); node-redis: eval(script, { keys, arguments }).
        const flat = args.flatMap((arg) => ((arg as { arguments?: unknown[] } | null)?.arguments ?? [arg]) as unknown[]);
        const bytes = flat.reduce<number>((sum, arg) => sum + (arg instanceof Uint8Array ? arg.byteLength : 0), 0);
        peak = Math.max(peak, (outstanding += bytes));
        return send(...args).finally(() => (outstanding -= bytes));
      };
      const inbox = createRedisInbox(client.client, { ...fast, prefix: 'pinned:' });
      const budget = 4 * 1024 * 1024;
      const handler = createWebhookHandler({ secret: webhookSecret, inbox, inboxTimeoutMs: 200, maxBufferedBytes: budget, onError: () => {} });
      const server = createServer(toNodeHandler(handler));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      cleanup.push(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));
      const url = 'http://127.0.0.1:' + (server.address() as AddressInfo).port + '/webhooks';
      const push = async (order: string, bytes: number) => {
        const body = bodyOf(snapshot(order, '2024-06-01T12:00:00+08:00', ' ' + 'x'.repeat(bytes)));
        const headers = { 'content-type': 'application/json', 'x-channel-webhook-signature': await signWebhookBody(body, webhookSecret) };
        return (await fetch(url, { method: 'POST', body, headers }).catch(() => undefined))?.status;
      };
      redis.pause();
      const statuses: Array<number | undefined> = [];
      const started = Date.now();
      for (let round = 0; Date.now() - started < 3000; round++)
        statuses.push(...(await Promise.all(Array.from({ length: 6 }, (_, i) => push('SO-pinned-' + round + '-' + i, 512 * 1024)))));
      // Far more than the budget was sent, none of it acknowledged...
      expect(statuses.length * 512 * 1024).toBeGreaterThan(3 * budget);
      expect(statuses.filter((status) => status !== undefined && status < 300)).toEqual([]);
      // ...and never more than the budget held.
      expect(peak).toBeLessThanOrEqual(budget);
      redis.resume();
      await until(() => outstanding === 0, 'Redis to answer the appends it held');
      expect(await push('SO-after-thaw', 1000)).toBe(202);
    });

    test('Redis stopped: 503 at once, never 2xx; once it is back the redelivery is stored and runs; a worker waits it out', async () => {
      const { redis, client } = await setUp(kind, true);
      const inbox = createRedisInbox(client.client, { ...fast, prefix: 'stopped:' });
      const handler = createWebhookHandler({ secret: webhookSecret, inbox, inboxTimeoutMs: 1000, onError: () => {} });
      const stages: InboxErrorInfo['stage'][] = [];
      const runs: string[] = [];
      const worker = inbox.process({
        onError: (_e, info) => void stages.push(info.stage),
        onLogisticsUpdated: ({ logistics }) => void runs.push(logistics.order_no),
      });
      cleanup.push(() => worker.close());
      await redis.down();
      const body = bodyOf(snapshot('SO-stopped', '2024-06-01T12:00:00+08:00'));
      const started = performance.now();
      expect((await post(handler, body)).status).toBe(503);
      expect(performance.now() - started).toBeLessThan(WINDOW_MS);
      await until(() => stages.includes('redis'), 'the worker to report the failing reads');
      await redis.up();
      // 202 stored now, or 200 duplicate: the client may have sent the refused append once Redis came back.
      await until(async () => [200, 202].includes((await post(handler, body)).status), 'the redelivery to be acknowledged', 15_000);
      await until(() => runs.length === 1, 'the run', 15_000);
      expect(runs).toEqual(['SO-stopped']);
    });
  });

  test('Redis restarted WITHOUT persistence: pushes stored before are gone (a data-lost error says so); workers recover and process new pushes', async () => {
    const { redis, client } = await setUp(clientKinds[0]);
    const inbox = createRedisInbox(client.client, { ...fast, prefix: 'volatile:' });
    const handler = createWebhookHandler({ secret: webhookSecret, inbox, onError: () => {} });
    const reports: Array<[string, InboxErrorInfo]> = [];
    const runs: string[] = [];
    let gate = Promise.resolve();
    const worker = inbox.process({
      concurrency: 2,
      onError: (error, info) => void reports.push([(error as Error).message, info]),
      onLogisticsUpdated: async ({ logistics }) => {
        await gate;
        runs.push(logistics.order_no);
      },
    });
    cleanup.push(() => worker.close());
    expect((await post(handler, bodyOf(snapshot('SO-before', '2024-06-01T12:00:00+08:00')))).status).toBe(202);
    await until(() => runs.length === 1, 'the first run');
    let open!: () => void;
    gate = new Promise((resolve) => (open = resolve));
    for (let i = 0; i < 3; i++) await post(handler, bodyOf(snapshot('SO-lost-' + i, '2024-06-01T12:00:00+08:00')));
    await until(() => worker.running === 2, 'two callbacks held mid-run');
    await redis.down();
    await redis.up();
    open();
    await until(() => reports.some(([, info]) => info.stage === 'data-lost'), 'the data-lost report', 15_000);
    const [message, info] = reports.find(([, i]) => i.stage === 'data-lost')!;
    expect(info.level).toBe('error');
    expect(message).toMatch(/restarted without persistence.*appendonly yes/);
    expect((await post(handler, bodyOf(snapshot('SO-after', '2024-06-01T12:00:00+08:00')))).status).toBe(202);
    await until(() => runs.includes('SO-after'), 'a push after the restart to run', 15_000);
    // The two mid-run finished (their outcome had nowhere to go); the third one, queued, is lost with Redis's data.
    expect(runs.filter((order) => order.startsWith('SO-lost-'))).toHaveLength(2);
  });

  test('Redis restarted WITHOUT persistence while a worker started paused (a deploy behind pause()) waits: the pushes acknowledged meanwhile are gone and so is the pause, and a data-lost error says so (before: nothing at all)', async () => {
    const { redis, client } = await setUp(clientKinds[0]);
    const inbox = createRedisInbox(client.client, { ...fast, prefix: 'paused-volatile:' });
    const handler = createWebhookHandler({ secret: webhookSecret, inbox, onError: () => {} });
    await inbox.pause();
    const reports: Array<[string, InboxErrorInfo]> = [];
    const runs: string[] = [];
    const worker = inbox.process({
      onError: (error, info) => void reports.push([(error as Error).message, info]),
      onLogisticsUpdated: ({ logistics }) => void runs.push(logistics.order_no),
    });
    cleanup.push(() => worker.close());
    for (let i = 0; i < 3; i++) expect((await post(handler, bodyOf(snapshot('SO-held-' + i, '2024-06-01T12:00:00+08:00')))).status).toBe(202);
    await sleep(300);
    expect(await inbox.stats()).toMatchObject({ pending: 3, paused: true });
    await redis.down();
    await redis.up();
    await until(() => reports.some(([, info]) => info.stage === 'data-lost'), 'the data-lost report', 15_000).catch((error: Error) => {
      throw new Error(error.message + '; reports: ' + JSON.stringify(reports.map(([message, info]) => info.stage + ': ' + message)));
    });
    const [message, info] = reports.find(([, i]) => i.stage === 'data-lost')!;
    expect(info.level).toBe('error');
    expect(message).toMatch(/pushes stored before are lost, and an inbox that was paused is not any more .*appendonly yes/);
    expect(await inbox.stats()).toMatchObject({ pending: 0, paused: false });
    expect(runs).toEqual([]);
  });

  test('Redis restarted WITH persistence (appendonly, fsync always) mid-run: every push acknowledged is processed', async () => {
    const { redis, client } = await setUp(clientKinds[0], true);
    const inbox = createRedisInbox(client.client, { ...fast, prefix: 'durable:' });
    const handler = createWebhookHandler({ secret: webhookSecret, inbox, onError: () => {} });
    const runs = new Set<string>();
    const worker = inbox.process({
      concurrency: 3,
      onError: () => {},
      onLogisticsUpdated: async ({ logistics }) => {
        await sleep(50);
        runs.add(logistics.order_no);
      },
    });
    cleanup.push(() => worker.close());
    // Like the service: a push answered non-2xx is delivered again.
    const acknowledged: string[] = [];
    for (let i = 0; i < 30; i++) {
      if (i === 10) {
        await redis.down();
        await redis.up();
      }
      const order = 'SO-durable-' + i;
      await until(async () => (await post(handler, bodyOf(snapshot(order, '2024-06-01T12:00:00+08:00')))).status === 202, order, 15_000);
      acknowledged.push(order);
    }
    await until(() => acknowledged.every((order) => runs.has(order)), 'every acknowledged push to run', 20_000);
    expect(runs.size).toBe(30);
  });
});
