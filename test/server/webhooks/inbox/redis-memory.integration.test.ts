/**
 * The inbox at Redis's memory limits (issue #43): a redis-server started with a small `maxmemory`,
 * with `noeviction` (Redis full refuses writes) and with `allkeys-lru` (Redis full evicts keys).
 * Nothing acknowledged may be stranded or dropped without a trace.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { createRedisInbox, createWebhookHandler, type InboxErrorInfo, type RedisInboxOptions } from '../../../../src/server-node.js';
import { Redis as IoRedis } from 'ioredis';
import { hasRedis, startRedis } from '../../../helpers/redis.js';
import { clientKinds, type ConnectedClient } from '../../redis/clients.js';
import { bodyOf, post, sleep, snapshot, until, webhookSecret } from './inbox-helpers.js';

const fast = { pollMs: 10, leaseMs: 1500, timeoutMs: 500 };
// ~2 KB per push: a few hundred fill the room a 3 MB Redis leaves.
const padding = ' ' + 'x'.repeat(2000);

type Raw = { call?(...args: string[]): Promise<unknown>; sendCommand?(args: string[]): Promise<unknown> };
/** A raw command through either client. */
const command = (client: ConnectedClient, ...args: string[]) => {
  const raw = client.client as unknown as Raw;
  return (raw.call ? raw.call(...args) : raw.sendCommand!(args)) as Promise<unknown>;
};
const usedMemory = async (client: ConnectedClient) => Number(/used_memory:(\d+)/.exec(String(await command(client, 'INFO', 'memory')))![1]);

describe.runIf(hasRedis)('the inbox at Redis memory limits', () => {
  const cleanup: Array<() => Promise<unknown> | void> = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).toReversed()) await step();
  });
  async function setUp(policy: string, kind = clientKinds[0]) {
    const redis = await startRedis({ args: ['--maxmemory', '3mb', '--maxmemory-policy', policy] });
    cleanup.push(() => redis.stop());
    const client = await kind.connect(redis.url);
    cleanup.push(() => client.close());
    return { redis, client };
  }
  /** An inbox, its handler and a worker whose callback fails ("database down") until `up()`. */
  function failing(client: ConnectedClient, options: RedisInboxOptions) {
    const inbox = createRedisInbox(client.client, { ...fast, ...options });
    const refusals: string[] = [];
    const handler = createWebhookHandler({
      secret: webhookSecret,
      inbox,
      onError: (error, info) => void (info.status === 503 && refusals.push(String(error))),
    });
    let databaseDown = true;
    const processed = new Set<string>();
    const reports: Array<[string, InboxErrorInfo]> = [];
    const worker = inbox.process({
      concurrency: 4,
      onError: (error, info) => void reports.push([(error as Error).message, info]),
      onLogisticsUpdated: ({ logistics }) => {
        if (databaseDown) throw new Error('database down');
        processed.add(logistics.order_no);
      },
    });
    cleanup.push(() => worker.close());
    const stage = (name: InboxErrorInfo['stage']) => reports.filter(([, info]) => info.stage === name);
    return { inbox, handler, refusals, processed, reports, stage, up: () => (databaseDown = false) };
  }

  describe.each([clientKinds[0], clientKinds[2]])('$name', (kind) => {
    test('Redis full (maxmemory, noeviction) while the callback fails: once it succeeds again every acknowledged push is processed, and new pushes are stored again', async () => {
      const { client } = await setUp('noeviction', kind);
      const { inbox, handler, refusals, processed, stage, up } = failing(client, { prefix: 'full:', retryDelayMs: () => 1000 });
      // Pushes until Redis refuses them (503), and a few more.
      const acknowledged: string[] = [];
      const started = Date.now();
      let refused = 0;
      for (let i = 0; i < 2000 && refused < 20; i++) {
        const order = 'SO-full-' + i;
        const { status } = await post(handler, bodyOf(snapshot(order, '2024-06-01T12:00:00+08:00', padding)));
        if (status === 202) acknowledged.push(order);
        else if (status === 503) refused++;
        else throw new Error('unexpected ' + status);
      }
      expect(refused).toBe(20);
      expect(acknowledged.length).toBeGreaterThan(50);
      // Every push failed at least once and waits for its next attempt: Redis stays full.
      await until(() => stage('callback').length >= acknowledged.length, 'each push to fail once', 30_000);
      expect(await usedMemory(client)).toBeGreaterThan(0.9 * 3 * 1024 * 1024);
      // The oldest of them waits since the first push (it is parked for a retry, not in the stream).
      const waited = Date.now() - started;
      expect((await inbox.stats()).oldestMs).toBeGreaterThanOrEqual(waited - 1000);
      up();
      // Every one acknowledged; a push answered 503 may have been stored all the same (its append
      // outlived inboxTimeoutMs on a loaded machine) and runs too: at least once, never fewer.
      await until(
        () => acknowledged.every((order) => processed.has(order)),
        'every acknowledged push to be processed (' + acknowledged.length + ')',
        20_000,
      ).catch((error: Error) => {
        throw new Error(error.message + '; processed ' + processed.size);
      });
      expect(acknowledged.filter((order) => !processed.has(order))).toEqual([]);
      // The refusals said why.
      expect(refusals[0]).toMatch(/Redis is full \(used memory above maxmemory, policy noeviction\): the push was not stored, so it is answered 503/);
      // Room again: a new push is stored and runs.
      await until(
        async () => (await post(handler, bodyOf(snapshot('SO-after', '2024-06-01T12:00:00+08:00')))).status === 202,
        'a new push to be stored',
        10_000,
      );
      await until(() => processed.has('SO-after'), 'the new push to run');
      expect(await inbox.stats()).toMatchObject({ pending: 0, processing: 0, retrying: 0, deadLetters: 0 });
    }, 120_000);
  });

  test('an evicting Redis (allkeys-lru) shared with an app cache while pushes wait for a retry: the worker says so at start, naming the fix, and no push is lost without a trace', async () => {
    const { client } = await setUp('allkeys-lru');
    const { handler, processed, stage, up } = failing(client, { prefix: 'lru:', retryDelayMs: () => 4000 });
    const orders = Array.from({ length: 20 }, (_, i) => 'SO-lru-' + i);
    for (const order of orders) expect((await post(handler, bodyOf(snapshot(order, '2024-06-01T12:00:00+08:00', padding)))).status).toBe(202);
    await until(() => stage('callback').length >= 20, 'each push to fail once');
    // The app caches in the same Redis meanwhile: 300 keys of 10 KB over 6 s, more than Redis holds.
    const value = 'v'.repeat(10_000);
    for (let i = 0; i < 300; i++) {
      await command(client, 'SET', 'app:cache:' + i, value);
      await sleep(20);
    }
    expect(Number(/evicted_keys:(\d+)/.exec(String(await command(client, 'INFO', 'stats')))![1])).toBeGreaterThan(50);
    up();
    // Each push runs, or (when Redis evicted it all the same) is a dead letter and an error naming its order.
    const traced = () => new Set(stage('data-lost').map(([, info]) => info.orderNo));
    const untraced = () => orders.filter((order) => !processed.has(order) && !traced().has(order));
    await until(() => untraced().length === 0, 'every push to run or be reported lost', 15_000).catch((error: Error) => {
      throw new Error(error.message + '; processed ' + processed.size + ' of 20, reported lost ' + traced().size);
    });
    const [policy] = stage('memory');
    expect(policy?.[1].level).toBe('error');
    expect(policy?.[0]).toMatch(/maxmemory-policy is allkeys-lru: when full it evicts any key.*Set maxmemory-policy noeviction/);
  }, 60_000);

  test('an evicting Redis (allkeys-lru) through a user whose ACL refuses INFO (+@all -@dangerous, a common hardening; a managed Redis that hides it): the worker says it cannot check the policy, naming +info', async () => {
    const { redis, client } = await setUp('allkeys-lru');
    // INFO is in @dangerous: this user may run everything the inbox's scripts call, but not INFO.
    await command(client, 'ACL', 'SETUSER', 'app', 'on', '>pw', '~*', '+@all', '-@dangerous');
    const app = new IoRedis(redis.url, { username: 'app', password: 'pw', enableReadyCheck: false });
    cleanup.push(() => app.disconnect());
    const inbox = createRedisInbox(app, { ...fast, prefix: 'noinfo:' });
    const reports: Array<[string, InboxErrorInfo]> = [];
    const worker = inbox.process({ onLogisticsUpdated: () => {}, onError: (error, info) => void reports.push([(error as Error).message, info]) });
    cleanup.push(() => worker.close());
    await until(() => reports.some(([, info]) => info.stage === 'memory'), 'a memory report', 5000).catch((error: Error) => {
      throw new Error(error.message + '; reports: ' + JSON.stringify(reports));
    });
    const [message, info] = reports.find(([, at]) => at.stage === 'memory')!;
    expect(info.level).toBe('warn');
    expect(message).toMatch(/could not read Redis's maxmemory-policy .*Grant the inbox's Redis user \+info \(ACL SETUSER <user> \+info\)/);
    // stats() has no memory to give: absent, as documented.
    expect((await inbox.stats()).memory).toBeUndefined();
  });

  describe('keys Redis evicted under a push waiting for its retry (deleted here as an evicting Redis would)', () => {
    async function parkedPushes(prefix: string) {
      const { client } = await setUp('noeviction');
      const { inbox, handler, processed, stage, up } = failing(client, { prefix, retryDelayMs: () => 1500 });
      const orders = ['SO-evicted-1', 'SO-evicted-2', 'SO-evicted-3'];
      for (const order of orders) expect((await post(handler, bodyOf(snapshot(order, '2024-06-01T12:00:00+08:00')))).status).toBe(202);
      await until(async () => (await inbox.stats()).retrying === 3, 'the three pushes to wait for a retry');
      return { client, inbox, orders, processed, stage, up };
    }

    test('their fields (the parked hash): each becomes a dead letter and an error naming its order, never a silent drop', async () => {
      const { client, inbox, orders, processed, stage, up } = await parkedPushes('evicted-fields:');
      await command(client, 'DEL', '{evicted-fields:inbox}:parked');
      up();
      await until(async () => (await inbox.stats()).deadLetters === 3, 'three dead letters', 10_000);
      const lost = stage('data-lost');
      expect(lost.map(([, info]) => [info.level, info.orderNo]).toSorted()).toEqual(orders.map((order) => ['error', order]));
      expect(lost[0][0]).toMatch(/Redis evicted this push.*fetch order SO-evicted-\d's logistics from the service/);
      const dead = await inbox.deadLetters();
      expect(dead.map((letter) => letter.orderNo).toSorted()).toEqual(orders);
      expect(lost.map(([, info]) => info.id).toSorted()).toEqual(dead.map((letter) => letter.id).toSorted());
      expect(dead[0].error).toMatch(/Redis lost this push/);
      expect(processed.size).toBe(0);
      // Nothing to run again: replay leaves them, discard drops them.
      expect(await inbox.replay()).toBe(0);
      expect(await inbox.discard(dead[0].id)).toBe(true);
      expect(await inbox.stats()).toMatchObject({ retrying: 0, deadLetters: 2, oldestMs: 0 });
    });

    test('their schedule (the retry set): they run all the same', async () => {
      const { client, inbox, orders, processed, up } = await parkedPushes('evicted-schedule:');
      await command(client, 'DEL', '{evicted-schedule:inbox}:retry');
      up();
      await until(() => processed.size === 3, 'the three pushes to run', 10_000);
      expect([...processed].toSorted()).toEqual(orders);
      expect(await inbox.stats()).toMatchObject({ retrying: 0, deadLetters: 0, oldestMs: 0 });
    });
  });
});
