/**
 * createRedisInbox against a real redis-server (issue #33): intake, dedup, workers, retries, dead
 * letters, replay, order per order_no, a hung callback, close(). Every client a user may hand it
 * (ioredis 5 and 6, node-redis 4, 5 and 6) runs the round trip; the rest runs on ioredis 6 and
 * node-redis 6. Redis frozen, stopped and restarted: redis-faults.integration.test.ts; killed processes: crash.integration.test.ts.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import {
  ConfigError,
  createRedisDedupStore,
  createRedisInbox,
  createRedisTokenCache,
  createWebhookHandler,
  type InboxErrorInfo,
  type RedisInboxOptions,
} from '../../../../src/server-node.js';
import { hasRedis, startRedis, type RedisServer } from '../../../helpers/redis.js';
import { clientKinds } from '../../redis/clients.js';
import { Redis as IoRedis } from 'ioredis';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { bodyOf, post, sleep, snapshot, until, webhookSecret } from './inbox-helpers.js';

// Short leases and delays: the tests provoke retries and lapses on purpose.
const fast: RedisInboxOptions = { pollMs: 10, leaseMs: 1500, timeoutMs: 500, retryDelayMs: () => 20 };

describe.runIf(hasRedis)('createRedisInbox on a real redis-server', () => {
  let redis: RedisServer;
  const open: Array<{ close(): Promise<unknown> }> = [];
  let n = 0;
  const fresh = () => 'inbox-' + ++n + ':';
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((o) => o.close()));
  });
  afterAll(async () => {
    await redis?.stop();
  });
  const connect = async (kind = clientKinds[0]) => {
    const client = await kind.connect(redis.url);
    open.push(client);
    return client;
  };

  describe.each(clientKinds)('$name', (kind) => {
    test('stores a signed push (202), acknowledges its repeat without storing it (200 duplicate), a worker runs it once; every key under one hash tag', async () => {
      const client = await connect(kind);
      const prefix = fresh();
      const inbox = createRedisInbox(client.client, { ...fast, prefix });
      const handler = createWebhookHandler({ secret: webhookSecret, inbox, onError: () => {} });
      const body = bodyOf(snapshot('SO-1', '2024-06-01T12:00:00+08:00'));
      expect(await post(handler, body)).toEqual({ status: 202, body: { ok: true, queued: true } });
      expect(await post(handler, body)).toEqual({ status: 200, body: { ok: true, duplicate: true } });
      expect(await inbox.stats()).toMatchObject({ pending: 1, processing: 0, retrying: 0, deadLetters: 0 });
      const runs: string[] = [];
      const worker = inbox.process({ onLogisticsUpdated: (event, context) => void runs.push(event.logistics.order_no + '#' + context.attempt) });
      open.push(worker);
      await until(async () => (await inbox.stats()).pending === 0 && runs.length === 1, 'the push to run');
      expect((await inbox.stats()).workers).toBe(1);
      await worker.close();
      expect(runs).toEqual(['SO-1#1']);
      // Processed: a later repeat is still acknowledged and not run.
      expect(await post(handler, body)).toEqual({ status: 200, body: { ok: true, duplicate: true } });
      expect(await inbox.stats()).toEqual({
        pending: 0,
        processing: 0,
        retrying: 0,
        deadLetters: 0,
        oldestMs: 0,
        workers: 0,
        paused: false,
        memory: { usedBytes: expect.any(Number), maxBytes: 0, policy: 'noeviction' },
      });
      const keys = await client.raw.keys('*' + prefix + '*');
      expect(keys.length).toBeGreaterThan(0);
      expect(keys.filter((key) => !key.startsWith('{' + prefix + 'inbox}:'))).toEqual([]);
    });
  });

  describe.each([clientKinds[0], clientKinds[2]])('$name', (kind) => {
    test('a callback that always throws: retried with backoff up to maxAttempts, then a dead letter; replay() runs it again, discard() drops it', async () => {
      const client = await connect(kind);
      const delays: number[] = [];
      const inbox = createRedisInbox(client.client, { ...fast, prefix: fresh(), maxAttempts: 3, retryDelayMs: (attempt) => (delays.push(attempt), 30) });
      const handler = createWebhookHandler({ secret: webhookSecret, inbox });
      expect((await post(handler, bodyOf(snapshot('SO-dead', '2024-06-01T12:00:00+08:00')))).status).toBe(202);
      const reports: Array<[string, InboxErrorInfo]> = [];
      const attempts: number[] = [];
      const worker = inbox.process({
        onError: (error, info) => void reports.push([String((error as Error).message), info]),
        onLogisticsUpdated: (_event, context) => {
          attempts.push(context.attempt);
          throw new Error('database down');
        },
      });
      open.push(worker);
      await until(async () => (await inbox.stats()).deadLetters === 1, 'the dead letter');
      expect(attempts).toEqual([1, 2, 3]);
      expect(delays).toEqual([1, 2]);
      expect(reports.map(([, info]) => [info.stage, info.level, info.attempt, info.orderNo])).toEqual([
        ['callback', 'warn', 1, 'SO-dead'],
        ['callback', 'warn', 2, 'SO-dead'],
        ['dead-letter', 'error', 3, 'SO-dead'],
      ]);
      const [dead] = await inbox.deadLetters();
      expect(dead).toMatchObject({ orderNo: 'SO-dead', attempts: 3, error: 'database down' });
      expect(await inbox.stats()).toMatchObject({ pending: 0, processing: 0, retrying: 0, deadLetters: 1 });
      // A repeat of a dead-lettered push is acknowledged (it is stored), not queued again.
      expect((await post(handler, bodyOf(snapshot('SO-dead', '2024-06-01T12:00:00+08:00')))).status).toBe(200);
      expect(await inbox.replay(dead.id)).toBe(1);
      await until(() => attempts.length === 6, 'three more attempts');
      expect(attempts.slice(3)).toEqual([1, 2, 3]);
      await until(async () => (await inbox.stats()).deadLetters === 1, 'the dead letter again');
      expect(await inbox.replay()).toBe(1); // all of them
      await until(async () => (await inbox.stats()).deadLetters === 1 && attempts.length === 9, 'the dead letter a third time');
      const [again] = await inbox.deadLetters();
      expect(await inbox.discard(again.id)).toBe(true);
      expect(await inbox.discard(again.id)).toBe(false);
      expect(await inbox.stats()).toMatchObject({ deadLetters: 0, pending: 0 });
      await expect(inbox.replay('not-an-id')).rejects.toThrow(ConfigError);
    });
  });

  test('a callback that throws a value whose message cannot be read (a throwing getter, a revoked Proxy, a null-prototype object, an Error whose message is a number): each a failed attempt retried with backoff, then a dead letter, never a lapsed lease or "its worker died"', async () => {
    const client = await connect();
    const { tracer, meter } = { tracer: new BasicTracerProvider().getTracer('t'), meter: new MeterProvider().getMeter('m') };
    const inbox = createRedisInbox(client.client, { ...fast, prefix: fresh(), maxAttempts: 3, telemetry: { tracer, meter } });
    const handler = createWebhookHandler({ secret: webhookSecret, inbox });
    const hostile: Record<string, () => unknown> = {
      'SO-getter': () =>
        Object.defineProperty({}, 'message', {
          get: () => {
            throw new Error('unreadable');
          },
        }),
      'SO-revoked': () => {
        const { proxy, revoke } = Proxy.revocable({}, {});
        revoke();
        return proxy;
      },
      'SO-nullproto': () => Object.create(null) as unknown,
      'SO-numeric': () => Object.assign(new Error('x'), { message: 42 }),
    };
    for (const order of Object.keys(hostile)) expect((await post(handler, bodyOf(snapshot(order, '2024-06-01T12:00:00+08:00')))).status).toBe(202);
    const reports: Array<[string | undefined, string, number | undefined]> = [];
    const logged: string[] = [];
    const worker = inbox.process({
      concurrency: 4,
      onError: (error, info) => {
        reports.push([info.orderNo, info.stage, info.attempt]);
        logged.push(typeof error === 'object' && error instanceof Error ? error.message : typeof error);
      },
      onLogisticsUpdated: (event) => {
        throw hostile[event.logistics.order_no]();
      },
    });
    open.push(worker);
    await until(async () => (await inbox.stats()).deadLetters === 4, 'four dead letters');
    for (const order of Object.keys(hostile))
      expect(reports.filter(([o]) => o === order).map(([, stage, attempt]) => [stage, attempt])).toEqual([
        ['callback', 1],
        ['callback', 2],
        ['dead-letter', 3],
      ]);
    for (const dead of await inbox.deadLetters()) {
      expect(dead.attempts).toBe(3);
      expect(dead.error).not.toMatch(/died|lease/);
    }
    expect(logged.join(' ')).not.toMatch(/unreadable/);
  });

  test('stats().oldestMs counts a push waiting for a retry: the age of the oldest push not processed yet, retried or not', async () => {
    const client = await connect();
    const inbox = createRedisInbox(client.client, { ...fast, prefix: fresh(), maxAttempts: 100, retryDelayMs: () => 50 });
    const handler = createWebhookHandler({ secret: webhookSecret, inbox });
    const stored = Date.now();
    expect((await post(handler, bodyOf(snapshot('SO-old', '2024-06-01T12:00:00+08:00')))).status).toBe(202);
    let failures = 0;
    let succeed = false;
    const worker = inbox.process({
      onError: () => {},
      onLogisticsUpdated: () => {
        if (!succeed) throw new Error('database down (' + ++failures + ')');
      },
    });
    open.push(worker);
    await until(() => failures >= 13 && Date.now() - stored >= 1500, 'thirteen failures, 1.5 s');
    // Sampled while it waits for its next attempt, and while it runs again.
    const ages: number[] = [];
    for (let i = 0; i < 10; i++) {
      ages.push((await inbox.stats()).oldestMs - (Date.now() - stored));
      await sleep(15);
    }
    expect(Math.min(...ages)).toBeGreaterThan(-300);
    // A push that arrives now is younger: the oldest is still the retried one.
    expect((await post(handler, bodyOf(snapshot('SO-new', '2024-06-01T12:00:00+08:00')))).status).toBe(202);
    expect((await inbox.stats()).oldestMs).toBeGreaterThanOrEqual(1500);
    succeed = true;
    await until(async () => (await inbox.stats()).oldestMs === 0, 'both processed');
    expect(await inbox.stats()).toMatchObject({ pending: 0, processing: 0, retrying: 0 });
  });

  test.each([
    ['an hour ahead', 3_600_000],
    ['an hour behind', -3_600_000],
  ])(
    "stats().oldestMs is measured on Redis's clock: a receiver whose clock is %s neither hides a push waiting for its retry nor ages it by an hour, nor one replayed",
    async (_name, skew) => {
      const client = await connect();
      const inbox = createRedisInbox(client.client, { ...fast, prefix: fresh(), maxAttempts: 8, retryDelayMs: () => 200 });
      const hour = 3_600_000;
      const stored = Date.now();
      const body = bodyOf(snapshot('SO-skew', '2024-06-01T12:00:00+08:00'));
      const rawBody = new TextEncoder().encode(body);
      // What the handler hands the inbox, on a machine whose clock is `skew` off.
      await inbox.append({ key: 'k-skew', body, rawBody, event: 'logistics.updated', orderNo: 'SO-skew', receivedAt: Date.now() + skew });
      let failures = 0;
      const worker = inbox.process({
        onError: () => {},
        onLogisticsUpdated: () => {
          throw new Error('database down (' + ++failures + ')');
        },
      });
      open.push(worker);
      await until(() => failures >= 2 && Date.now() - stored >= 1000, 'two failures, 1 s');
      const waited = Date.now() - stored;
      const { oldestMs } = await inbox.stats();
      expect(oldestMs).toBeGreaterThanOrEqual(waited - 200);
      expect(oldestMs).toBeLessThan(hour / 2);
      await until(async () => (await inbox.stats()).deadLetters === 1, 'the dead letter');
      await worker.close();
      expect(await inbox.stats()).toMatchObject({ oldestMs: 0, pending: 0, retrying: 0 });
      // Replayed: waiting again, and its age is not the receiver's clock either.
      expect(await inbox.replay()).toBe(1);
      const replayed = (await inbox.stats()).oldestMs;
      expect(replayed).toBeLessThan(hour / 2);
    },
  );

  test('stats() during a deploy beside workers of the earlier version (which know no age set): an age whose push such a worker processed or put aside is dropped, not counted forever', async () => {
    const client = await connect();
    const prefix = fresh();
    const inbox = createRedisInbox(client.client, { ...fast, prefix });
    const tag = '{' + prefix + 'inbox}';
    const raw = client.client as unknown as { zadd(...a: Array<string | number>): Promise<unknown>; set(...a: string[]): Promise<unknown> };
    const hour = Date.now() - 3_600_000;
    // Parked by a new worker, then processed (d) or dead-lettered (x) by an earlier one; one still queued (q:<order>).
    await raw.zadd(tag + ':age', hour, 'k-done', hour + 1, 'k-dead', hour + 2, 'k-waiting');
    await raw.set(tag + ':push:k-done', 'd');
    await raw.set(tag + ':push:k-dead', 'x');
    await raw.set(tag + ':push:k-waiting', 'q:SO-1');
    expect((await inbox.stats()).oldestMs).toBeGreaterThanOrEqual(3_599_000);
    await raw.set(tag + ':push:k-waiting', 'd');
    expect((await inbox.stats()).oldestMs).toBe(0);
  });

  test('replay({ since }) puts back the dead letters put aside since then; the id the dead-letter report names is what replay(id) takes', async () => {
    const client = await connect();
    const inbox = createRedisInbox(client.client, { ...fast, prefix: fresh(), maxAttempts: 1 });
    const handler = createWebhookHandler({ secret: webhookSecret, inbox });
    let failing = true;
    const runs: string[] = [];
    const named: string[] = [];
    const worker = inbox.process({
      onError: (_error, info) => void (info.stage === 'dead-letter' && named.push(info.id!)),
      onLogisticsUpdated: ({ logistics }) => {
        if (failing) throw new Error('database down');
        runs.push(logistics.order_no);
      },
    });
    open.push(worker);
    expect((await post(handler, bodyOf(snapshot('SO-early', '2024-06-01T12:00:00+08:00')))).status).toBe(202);
    await until(async () => (await inbox.stats()).deadLetters === 1, 'the first dead letter');
    await sleep(20);
    const since = new Date();
    for (const order of ['SO-late-1', 'SO-late-2']) expect((await post(handler, bodyOf(snapshot(order, '2024-06-01T12:00:00+08:00')))).status).toBe(202);
    await until(async () => (await inbox.stats()).deadLetters === 3, 'three dead letters');
    // Beyond the latest Date: a ConfigError, not Redis's "Invalid stream ID"; the latest Date itself takes none.
    await expect(inbox.replay({ since: 1e300 })).rejects.toThrow(
      /pass a dead letter id, \{ since: Date or epoch ms \}, or nothing for all; got \{ since: 1e\+300 \}/,
    );
    expect(await inbox.replay({ since: new Date(8.64e15) })).toBe(0);
    expect(named.toSorted()).toEqual((await inbox.deadLetters()).map((letter) => letter.id).toSorted());
    failing = false;
    expect(await inbox.replay({ since })).toBe(2);
    await until(() => runs.length === 2, 'the two replayed');
    expect(runs.toSorted()).toEqual(['SO-late-1', 'SO-late-2']);
    expect(await inbox.replay({ since: since.getTime() })).toBe(0);
    // The id the report named for the first one.
    expect(await inbox.replay(named[0])).toBe(1);
    await until(() => runs.includes('SO-early'), 'the early one');
    expect(await inbox.stats()).toMatchObject({ deadLetters: 0 });
    await expect(inbox.replay({ since: 'yesterday' } as never)).rejects.toThrow(
      /pass a dead letter id, \{ since: Date or epoch ms \}, or nothing for all; got \{ since: "yesterday" \}/,
    );
    await expect(inbox.replay({ sinse: 1 } as never)).rejects.toThrow(/did you mean "since"/);
  });

  test('replay() of every dead letter ends although each fails again at once (each is taken once)', async () => {
    const client = await connect();
    const inbox = createRedisInbox(client.client, { ...fast, prefix: fresh(), maxAttempts: 1 });
    const handler = createWebhookHandler({ secret: webhookSecret, inbox });
    const worker = inbox.process({
      concurrency: 8,
      onError: () => {},
      onLogisticsUpdated: () => {
        throw new Error('database down');
      },
    });
    open.push(worker);
    for (let i = 0; i < 250; i++) await post(handler, bodyOf(snapshot('SO-again-' + i, '2024-06-01T12:00:00+08:00')));
    await until(async () => (await inbox.stats()).deadLetters === 250, '250 dead letters', 30_000);
    expect(await inbox.replay()).toBe(250);
    await until(async () => (await inbox.stats()).deadLetters === 250, '250 dead letters again', 30_000);
  });

  test('worker.pause() stops taking pushes (the running one finishes), resume() takes them again; inbox.pause() holds every worker; stats() counts the workers seen and says paused', async () => {
    const client = await connect();
    const inbox = createRedisInbox(client.client, { ...fast, prefix: fresh() });
    const handler = createWebhookHandler({ secret: webhookSecret, inbox });
    const runs: string[] = [];
    let release!: () => void;
    let gate: Promise<void> | undefined = new Promise((resolve) => (release = resolve));
    const worker = inbox.process({
      onLogisticsUpdated: async ({ logistics }) => {
        runs.push(logistics.order_no);
        await gate;
      },
    });
    open.push(worker);
    const other = inbox.process({ onLogisticsUpdated: ({ logistics }) => void runs.push(logistics.order_no) });
    open.push(other);
    await until(async () => (await inbox.stats()).workers === 2, 'two workers seen');
    other.pause();
    expect(other.paused).toBe(true);
    await post(handler, bodyOf(snapshot('SO-pause-1', '2024-06-01T12:00:00+08:00')));
    await until(() => runs.length === 1, 'the first run');
    worker.pause();
    gate = undefined;
    release();
    await post(handler, bodyOf(snapshot('SO-pause-2', '2024-06-01T12:00:00+08:00')));
    await sleep(300);
    expect(runs).toEqual(['SO-pause-1']);
    expect(await inbox.stats()).toMatchObject({ pending: 1, processing: 0, workers: 2, paused: false });
    // Every worker, from anywhere: the local resume() takes nothing while the inbox is paused.
    await inbox.pause();
    worker.resume();
    other.resume();
    expect(worker.paused).toBe(false);
    await sleep(300);
    expect(runs).toEqual(['SO-pause-1']);
    expect(await inbox.stats()).toMatchObject({ pending: 1, paused: true, workers: 2 });
    await inbox.resume();
    await until(() => runs.length === 2, 'the second run after resume');
    expect(await inbox.stats()).toMatchObject({ pending: 0, paused: false });
    await other.close();
    expect((await inbox.stats()).workers).toBe(1);
  });

  test('a callback that hangs is capped at callbackTimeoutMs: its signal aborts, the push is retried, the slot comes free', async () => {
    const client = await connect();
    const inbox = createRedisInbox(client.client, { ...fast, prefix: fresh(), callbackTimeoutMs: 300, maxAttempts: 5 });
    const handler = createWebhookHandler({ secret: webhookSecret, inbox });
    await post(handler, bodyOf(snapshot('SO-hang', '2024-06-01T12:00:00+08:00')));
    await post(handler, bodyOf(snapshot('SO-other', '2024-06-01T12:00:00+08:00')));
    const aborted: number[] = [];
    const done: string[] = [];
    const stages: string[] = [];
    const worker = inbox.process({
      concurrency: 1,
      onError: (_error, info) => void stages.push(info.stage),
      onLogisticsUpdated: async ({ logistics }, { attempt, signal }) => {
        if (logistics.order_no === 'SO-hang' && attempt === 1) {
          signal.addEventListener('abort', () => aborted.push(attempt));
          await new Promise(() => {}); // never settles
        }
        done.push(logistics.order_no + '#' + attempt);
      },
    });
    open.push(worker);
    await until(() => done.length === 2, 'both pushes');
    expect(aborted).toEqual([1]);
    expect(done.toSorted()).toEqual(['SO-hang#2', 'SO-other#1']);
    expect(stages).toEqual(['timeout']);
    await worker.close(); // does not wait for the hung call
  });

  test('a worker started while a new inbox is paused (a deploy behind inbox.pause()) runs the push after resume() with no "data-lost" alarm', async () => {
    const client = await connect();
    const inbox = createRedisInbox(client.client, { ...fast, prefix: fresh() });
    await inbox.pause();
    const handler = createWebhookHandler({ secret: webhookSecret, inbox });
    expect((await post(handler, bodyOf(snapshot('SO-paused-start', '2024-06-01T12:00:00+08:00')))).status).toBe(202);
    const runs: string[] = [];
    const reports: string[] = [];
    const worker = inbox.process({
      onLogisticsUpdated: ({ logistics }) => void runs.push(logistics.order_no),
      onError: (error, info) => void reports.push(info.stage + ': ' + (error as Error).message),
    });
    open.push(worker);
    await sleep(300);
    expect(runs).toEqual([]);
    await inbox.resume();
    await until(() => runs.length === 1, 'the push after resume');
    expect(reports).toEqual([]);
  });

  test('a Redis user whose ACL refuses the inbox (keys myapp:* only, a command its scripts call): 503 and reports naming the ACL it needs; with that ACL, pushes are stored and run', async () => {
    const raw = new IoRedis(redis.url);
    const prefix = fresh();
    const tag = '{' + prefix + 'inbox}';
    const users = { narrow: ['~myapp:*', '+@all'], noclaim: ['~*', '+@all', '-xautoclaim'], named: ['~' + tag + ':*', '+eval', '+time', '+@read', '+@write'] };
    for (const [name, rules] of Object.entries(users)) await raw.call('ACL', 'SETUSER', prefix + name, 'on', '>pw', 'resetkeys', '-@all', ...rules);
    const clients = Object.keys(users).map((name) => new IoRedis(redis.url, { username: prefix + name, password: 'pw', enableReadyCheck: false }));
    open.push(...[raw, ...clients].map((c) => ({ close: async () => c.disconnect() })));
    const [narrow, noclaim, named] = clients.map((c) => createRedisInbox(c, { ...fast, prefix }));
    const reports: string[] = [];
    const handlerOf = (inbox: typeof narrow) =>
      createWebhookHandler({ secret: webhookSecret, inbox, onError: (error) => void reports.push((error as Error).message) });
    const needs = new RegExp(
      "Redis's ACL refused the inbox \\(Redis said: .+\\)\\. .+ its Redis user needs ACL SETUSER <user> ~\\{" +
        prefix +
        'inbox\\}:\\* \\+eval \\+time \\+@read \\+@write',
    );
    expect((await post(handlerOf(narrow), bodyOf(snapshot('SO-acl-1', '2024-06-01T12:00:00+08:00')))).status).toBe(503);
    expect(reports).toEqual([expect.stringMatching(needs)]);
    expect(reports[0]).toMatch(/prefix "myapp:\{myapp\}:" gives keys myapp:\{myapp\}:inbox:/);
    // Refused inside a script (XAUTOCLAIM): the worker says the same.
    const workerReports: string[] = [];
    const refused = noclaim.process({ onLogisticsUpdated: () => {}, onError: (error) => void workerReports.push((error as Error).message) });
    open.push(refused);
    await until(() => workerReports.length > 0, "the worker's report");
    await refused.close();
    expect(workerReports[0]).toMatch(needs);
    // Redis: "ERR The user executing the script can't run this command…"; Valkey: "ERR ACL failure in script: … 'xautoclaim' command".
    expect(workerReports[0]).toMatch(/Redis said: ERR (The user executing the script can't run this command|ACL failure in script: .*'xautoclaim' command)/);
    // The ACL the message names is enough.
    const runs: string[] = [];
    expect((await post(handlerOf(named), bodyOf(snapshot('SO-acl-2', '2024-06-01T12:00:00+08:00')))).status).toBe(202);
    const worker = named.process({ onLogisticsUpdated: ({ logistics }) => void runs.push(logistics.order_no) });
    open.push(worker);
    await until(() => runs.length === 1, 'the push to run under the ACL named');
    expect(runs).toEqual(['SO-acl-2']);
  });

  test("an ioredis client with keyPrefix: every key the inbox uses carries it, so pause() holds its workers and two apps told apart by keyPrefix share nothing (not an order's newest snapshot)", async () => {
    const raw = new IoRedis(redis.url);
    const clients = ['app-a:', 'app-b:'].map((keyPrefix) => new IoRedis(redis.url, { keyPrefix }));
    open.push(...[raw, ...clients].map((c) => ({ close: async () => c.disconnect() })));
    const prefix = fresh();
    const [a, b] = clients.map((c) => createRedisInbox(c, { ...fast, prefix }));
    const runs: string[] = [];
    const record = (app: string) => (event: { logistics: { order_no: string } }) => void runs.push(app + ' ' + event.logistics.order_no);
    const [handlerA, handlerB] = [a, b].map((inbox) => createWebhookHandler({ secret: webhookSecret, inbox }));
    // Paused, app A's worker takes nothing.
    await a.pause();
    expect((await a.stats()).paused).toBe(true);
    const workerA = a.process({ onLogisticsUpdated: record('a') });
    open.push(workerA);
    expect((await post(handlerA, bodyOf(snapshot('SO-kp', '2024-06-01T12:00:00+08:00')))).status).toBe(202);
    await sleep(400);
    expect(runs).toEqual([]);
    await a.resume();
    await until(() => runs.length === 1, "app a's push after resume");
    // App B's push of an order of the same number, older than app A's: B's own, so it runs.
    const workerB = b.process({ onLogisticsUpdated: record('b') });
    open.push(workerB);
    expect((await post(handlerB, bodyOf(snapshot('SO-kp', '2024-06-01T11:00:00+08:00')))).status).toBe(202);
    await until(async () => (await b.stats()).pending === 0, "app b's push taken");
    await sleep(100);
    expect(runs).toEqual(['a SO-kp', 'b SO-kp']);
    const keys = await raw.keys('*' + prefix + '*');
    expect(keys.filter((key) => !key.startsWith('app-a:') && !key.startsWith('app-b:'))).toEqual([]);
  });

  test('an ioredis keyPrefix given as a Buffer: UTF-8 text works as the string would (pause holds, the push runs); bytes that are not UTF-8 are refused by the inbox, the dedup store and the token cache, not acknowledged and never run ("ERR Protocol error")', async () => {
    const text = new IoRedis(redis.url, { keyPrefix: Buffer.from('buf-é:') as never });
    const bytes = new IoRedis(redis.url, { keyPrefix: Buffer.from([0x62, 0xff, 0x3a]) as never });
    const raw = new IoRedis(redis.url);
    open.push(...[text, bytes, raw].map((c) => ({ close: async () => c.disconnect() })));
    const prefix = fresh();
    const inbox = createRedisInbox(text, { ...fast, prefix });
    await inbox.pause();
    const runs: string[] = [];
    const worker = inbox.process({ onLogisticsUpdated: ({ logistics }) => void runs.push(logistics.order_no) });
    open.push(worker);
    expect((await post(createWebhookHandler({ secret: webhookSecret, inbox }), bodyOf(snapshot('SO-buf', '2024-06-01T12:00:00+08:00')))).status).toBe(202);
    await sleep(300);
    expect(runs).toEqual([]);
    await inbox.resume();
    await until(() => runs.length === 1, 'the push after resume');
    expect((await raw.keys('*' + prefix + '*')).filter((key) => !key.startsWith('buf-é:{'))).toEqual([]);
    const refused = /keyPrefix is a Buffer that is not UTF-8 text \(bytes 62 ff 3a\): .*Give keyPrefix as a string/;
    expect(() => createRedisInbox(bytes, { ...fast, prefix })).toThrow(refused);
    expect(() => createRedisInbox(bytes, { ...fast, prefix })).toThrow(ConfigError);
    expect(() => createRedisDedupStore(bytes)).toThrow(refused);
    expect(() => createRedisTokenCache(bytes)).toThrow(refused);
  });

  test('order per order_no: an older snapshot arriving late is skipped (stale), and two pushes of one order never run at once', async () => {
    const client = await connect();
    const inbox = createRedisInbox(client.client, { ...fast, prefix: fresh() });
    const handler = createWebhookHandler({ secret: webhookSecret, inbox });
    let active = 0;
    let overlap = 0;
    const ran: string[] = [];
    const stale: string[] = [];
    const worker = inbox.process({
      concurrency: 8,
      onError: (_error, info) => void (info.stage === 'stale' && stale.push(info.orderNo!)),
      onLogisticsUpdated: async ({ logistics }) => {
        if (++active > 1) overlap++;
        await sleep(30);
        ran.push(String(logistics.shipments[0].events?.[0]?.time));
        active--;
      },
    });
    open.push(worker);
    // Three snapshots of one order, newest first, the two older ones arriving late.
    for (const time of ['2024-06-01T15:00:00+08:00', '2024-06-01T13:00:00+08:00', '2024-06-01T14:00:00+08:00'])
      expect((await post(handler, bodyOf(snapshot('SO-order', time)))).status).toBe(202);
    await until(async () => ran.length + stale.length === 3 && (await inbox.stats()).retrying === 0, 'the three pushes');
    expect(overlap).toBe(0);
    // The newest always ran; an older one runs only if it was taken before the newest finished.
    expect(ran).toContain('2024-06-01T15:00:00+08:00');
    expect(ran.indexOf('2024-06-01T15:00:00+08:00')).toBe(ran.length - 1);
    // And once the newest is processed, an older snapshot arriving late never runs.
    expect((await post(handler, bodyOf(snapshot('SO-order', '2024-06-01T12:00:00+08:00')))).status).toBe(202);
    await until(() => stale.length === 3 - ran.length + 1, 'the late snapshot to be skipped');
    expect(ran).not.toContain('2024-06-01T12:00:00+08:00');
  });

  test('pushes of a dead worker are taken over even behind a long list of live ones (the reclaim scan walks the whole pending list)', async () => {
    const client = await connect();
    const prefix = fresh();
    const inbox = createRedisInbox(client.client, { ...fast, prefix });
    const handler = createWebhookHandler({ secret: webhookSecret, inbox });
    for (let i = 0; i < 40; i++) await post(handler, bodyOf(snapshot('SO-scan-' + i, '2024-06-01T12:00:00+08:00')));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const busy = inbox.process({ concurrency: 30, onLogisticsUpdated: () => held });
    open.push({ close: () => (release(), busy.close()) });
    await until(() => busy.running === 30, 'thirty live pushes');
    // A worker that died right after taking the last ten: they are pending, never renewed.
    const raw = client.client as unknown as { xreadgroup(...args: string[]): Promise<unknown> };
    await raw.xreadgroup('GROUP', 'workers', 'dead-worker', 'COUNT', '10', 'STREAMS', '{' + prefix + 'inbox}:stream', '>');
    const taken: string[] = [];
    const rescuer = inbox.process({ concurrency: 1, onLogisticsUpdated: ({ logistics }) => void taken.push(logistics.order_no) });
    open.push(rescuer);
    await until(() => taken.length === 10, "the dead worker's ten pushes", 15_000);
    expect(busy.running).toBe(30);
    release();
  });

  test('a push whose workers keep dying mid-callback becomes a dead letter after maxAttempts, without another run', async () => {
    const client = await connect();
    const prefix = fresh();
    const inbox = createRedisInbox(client.client, { ...fast, prefix, maxAttempts: 3 });
    const handler = createWebhookHandler({ secret: webhookSecret, inbox });
    await post(handler, bodyOf(snapshot('SO-poison', '2024-06-01T12:00:00+08:00')));
    // Three workers took it and died (a callback that crashes its process): three deliveries, no outcome.
    const raw = client.client as unknown as {
      xreadgroup(...a: string[]): Promise<Array<[string, Array<[string, string[]]>]>>;
      xclaim(...a: string[]): Promise<unknown>;
    };
    const stream = '{' + prefix + 'inbox}:stream';
    await (client.client as unknown as { xgroup(...a: string[]): Promise<unknown> }).xgroup('CREATE', stream, 'workers', '0'); // as a worker's first read would
    const [[, [[id]]]] = await raw.xreadgroup('GROUP', 'workers', 'crashed', 'COUNT', '1', 'STREAMS', stream, '>');
    await raw.xclaim(stream, 'workers', 'crashed', '0', id, 'RETRYCOUNT', '3');
    const runs: string[] = [];
    const reports: Array<[string, InboxErrorInfo]> = [];
    const worker = inbox.process({ onError: (e, info) => void reports.push([(e as Error).message, info]), onLogisticsUpdated: () => void runs.push('ran') });
    open.push(worker);
    await until(async () => (await inbox.stats()).deadLetters === 1, 'the dead letter', 15_000);
    expect(runs).toEqual([]);
    expect(reports.map(([, info]) => [info.stage, info.attempt])).toEqual([['dead-letter', 3]]);
    expect((await inbox.deadLetters())[0]).toMatchObject({ attempts: 3, error: expect.stringMatching(/worker died mid-callback/) });
  });

  test('the same push from two receivers at once is stored once and run once', async () => {
    const [a, b] = [await connect(clientKinds[0]), await connect(clientKinds[2])];
    const prefix = fresh();
    const handlers = [a, b].map((c) =>
      createWebhookHandler({ secret: webhookSecret, inbox: createRedisInbox(c.client, { ...fast, prefix }), onError: () => {} }),
    );
    const bodies = Array.from({ length: 20 }, (_, i) => bodyOf(snapshot('SO-twice-' + i, '2024-06-01T12:00:00+08:00')));
    const answers = await Promise.all(bodies.flatMap((body) => handlers.map((handler) => post(handler, body))));
    expect(answers.filter((r) => r.status === 202)).toHaveLength(20);
    expect(answers.filter((r) => r.status === 200 && r.body.duplicate)).toHaveLength(20);
    const inbox = createRedisInbox(a.client, { ...fast, prefix });
    const runs: string[] = [];
    const worker = inbox.process({ concurrency: 4, onLogisticsUpdated: ({ logistics }) => void runs.push(logistics.order_no) });
    open.push(worker);
    await until(() => runs.length === 20, '20 runs');
    await sleep(100);
    expect(runs.length).toBe(20);
    expect(new Set(runs).size).toBe(20);
  });

  test('forged, unsigned, oversized and malformed pushes are refused and never stored; a push signed with the previous secret is (rotation)', async () => {
    const client = await connect();
    const inbox = createRedisInbox(client.client, { ...fast, prefix: fresh() });
    const handler = createWebhookHandler({ secret: ['whsec_new', webhookSecret], inbox, maxBodyBytes: 4096, onError: () => {} });
    const body = bodyOf(snapshot('SO-forged', '2024-06-01T12:00:00+08:00'));
    expect((await post(handler, body, 'whsec_attacker')).status).toBe(401);
    expect((await handler(new Request('http://x/', { method: 'POST', body }))).status).toBe(401);
    expect((await post(handler, bodyOf({ ...snapshot('SO-big', '2024-06-01T12:00:00+08:00'), partner_order_no: 'x'.repeat(5000) }))).status).toBe(413);
    expect((await post(handler, '{"event":"logistics.updated","logistics":{}}')).status).toBe(400);
    expect((await post(handler, '{not json')).status).toBe(400);
    expect(await inbox.stats()).toMatchObject({ pending: 0 });
    expect((await post(handler, body, 'whsec_new')).status).toBe(202);
    expect((await post(handler, bodyOf(snapshot('SO-rotated', '2024-06-01T12:00:00+08:00')), webhookSecret)).status).toBe(202);
    expect(await inbox.stats()).toMatchObject({ pending: 2 });
  });

  test('the body is stored as the bytes received (a leading BOM included) and runs as the JSON it is', async () => {
    const client = await connect(clientKinds[2]);
    const prefix = fresh();
    const inbox = createRedisInbox(client.client, { ...fast, prefix });
    const handler = createWebhookHandler({ secret: webhookSecret, inbox });
    const body = '\ufeff' + bodyOf(snapshot('SO-bom', '2024-06-01T12:00:00+08:00', ' 快件已发出'));
    expect((await post(handler, body)).status).toBe(202);
    const raw = client.client as unknown as { xRange(key: string, from: string, to: string): Promise<Array<{ message: Record<string, string> }>> };
    const [entry] = await raw.xRange('{' + prefix + 'inbox}:stream', '-', '+');
    expect(entry.message.b).toBe(body);
    const runs: string[] = [];
    const worker = inbox.process({ onLogisticsUpdated: ({ logistics }) => void runs.push(logistics.shipments[0].events![0].desc!) });
    open.push(worker);
    await until(() => runs.length === 1, 'the run');
    expect(runs).toEqual(['at 2024-06-01T12:00:00+08:00 快件已发出']);
  });

  test('worker.close() drains: no new push is taken, the running callback finishes and its outcome is stored', async () => {
    const client = await connect();
    const inbox = createRedisInbox(client.client, { ...fast, prefix: fresh() });
    const handler = createWebhookHandler({ secret: webhookSecret, inbox });
    for (let i = 0; i < 3; i++) await post(handler, bodyOf(snapshot('SO-close-' + i, '2024-06-01T12:00:00+08:00')));
    let started = 0;
    let finished = 0;
    const worker = inbox.process({
      concurrency: 1,
      onLogisticsUpdated: async () => {
        started++;
        await sleep(300);
        finished++;
      },
    });
    await until(() => started === 1, 'the first callback');
    await worker.close();
    expect({ started, finished }).toEqual({ started: 1, finished: 1 });
    expect(await inbox.stats()).toMatchObject({ pending: 2, processing: 0 });
    expect(worker.running).toBe(0);
  });

  test('options: a typo is a ConfigError with "did you mean"; bad values and an inbox beside a callback are refused', async () => {
    const client = await connect();
    expect(() => createRedisInbox(client.client, { attempts: 3 } as never)).toThrow(/did you mean "maxAttempts"/);
    expect(() => createRedisInbox(client.client, { leaseMs: 1000, timeoutMs: 500 })).toThrow(/leaseMs \(1000\) must be at least 3 x timeoutMs/);
    expect(() => createRedisInbox(client.client, { maxAttempts: 0 })).toThrow(ConfigError);
    expect(() => createRedisInbox({} as never)).toThrow(/needs your Redis client/);
    const inbox = createRedisInbox(client.client);
    expect(() => createWebhookHandler({ secret: 's', inbox, onLogisticsUpdated: () => {} } as never)).toThrow(/pass onLogisticsUpdated to inbox.process/);
    expect(() => createWebhookHandler({ secret: 's', inbox: {} as never })).toThrow(/inbox must have append\(push\)/);
    expect(() => createWebhookHandler({ secret: 's', onLogisticsUpdated: () => {}, inboxTimeoutMs: 10 } as never)).toThrow(/no inbox is given/);
    expect(() => inbox.process({ onLogisticsUpdated: () => {}, concurency: 2 } as never)).toThrow(/did you mean "concurrency"/);
    expect(() => inbox.process({} as never)).toThrow(/needs onLogisticsUpdated/);
  });
});
