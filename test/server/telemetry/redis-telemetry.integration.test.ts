/**
 * Telemetry where Redis is involved, on a real redis-server: two exchange instances sharing
 * createRedisTokenCache (one token call, the other waits on its lock: the lock_wait span), a hit
 * read from Redis, and the inbox: the handler's span (queued, duplicate) and the workers' span per
 * run (processed, retry, dead letter).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { ConfigError, createRedisInbox, createRedisTokenCache, createTokenExchange, createWebhookHandler } from '../../../src/server-node.js';
import { startSandbox, type Sandbox } from '../../../src/testing.js';
import { hasRedis, startRedis, type RedisServer } from '../../helpers/redis.js';
import { clientKinds } from '../redis/clients.js';
import { bodyOf, post, snapshot, until, webhookSecret } from '../webhooks/inbox/inbox-helpers.js';
import { brokenTelemetries, unhandledDuring } from './broken.js';
import { expectNoSecrets, otel, parentOf, type Otel } from './otel.js';

const CONSUMER = 4;
const ERROR = 2;

describe.runIf(hasRedis)('telemetry on a real redis-server', () => {
  let redis: RedisServer;
  let sandbox: Sandbox;
  let o: Otel;
  const open: Array<{ close(): Promise<unknown> }> = [];
  beforeAll(async () => {
    [redis, sandbox] = await Promise.all([startRedis(), startSandbox()]);
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.close()));
    await o?.close();
  });
  afterAll(async () => {
    await Promise.all([redis?.stop(), sandbox?.close()]);
  });
  const connect = async () => {
    const client = await clientKinds[0].connect(redis.url);
    open.push(client);
    return client.client;
  };

  /** The sandbox behind a node:http proxy that holds each token call `ms` before forwarding it. */
  async function slowService(ms: number): Promise<string> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        await new Promise((resolve) => setTimeout(resolve, ms));
        const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => !['host', 'connection', 'content-length'].includes(name)));
        const answer = await fetch(sandbox.url + req.url, { method: req.method, headers: headers as Record<string, string>, body: Buffer.concat(chunks) });
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text());
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    open.push({ close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))) });
    return 'http://127.0.0.1:' + (server.address() as AddressInfo).port;
  }

  test('two instances miss at once: one token call, the other waits on the lock (lock_wait span, outcome token); a later call hits Redis', async () => {
    o = otel();
    const baseUrl = await slowService(300);
    const prefix = 'otel-' + Date.now() + ':';
    const [a, b] = [await connect(), await connect()];
    const first = createTokenExchange({ baseUrl, ...sandbox.credentials, cache: createRedisTokenCache(a, { prefix }), telemetry: o.telemetry });
    const second = createTokenExchange({ baseUrl, ...sandbox.credentials, cache: createRedisTokenCache(b, { prefix }), telemetry: o.telemetry });
    const calls = sandbox.stats.tokenCalls;
    const [one, two] = await Promise.all([first.getToken('lock-user'), second.getToken('lock-user')]);
    expect(two.accessToken).toBe(one.accessToken);
    expect(sandbox.stats.tokenCalls - calls).toBe(1);
    const exchanges = o.named('channel.token_exchange');
    expect(exchanges.map((s) => s.attributes['channel.cache'])).toEqual(['miss', 'miss']);
    const waits = o.named('channel.token_exchange.lock_wait');
    expect(waits.map((s) => s.attributes['channel.lock.outcome'])).toEqual(['token']);
    const clients = o.spans().filter((s) => s.kind === 2);
    expect(clients).toHaveLength(1);
    // The wait and the token call belong to different getToken spans.
    const ids = exchanges.map((s) => s.spanContext().spanId);
    expect(new Set([parentOf(waits[0]), parentOf(clients[0])])).toEqual(new Set(ids));
    const waited = waits[0].endTime[0] * 1e3 + waits[0].endTime[1] / 1e6 - (waits[0].startTime[0] * 1e3 + waits[0].startTime[1] / 1e6);
    expect(waited).toBeGreaterThan(100); // it waited for the other's 300 ms call
    o.reset();
    await second.getToken('lock-user');
    expect(o.named('channel.token_exchange').map((s) => s.attributes['channel.cache'])).toEqual(['hit']);
    const outcomes = (await o.points()).filter((p) => p.name === 'channel.server.token.cache_outcomes').map((p) => [p.attributes['channel.cache'], p.value]);
    expect(outcomes).toEqual([
      ['miss', 2],
      ['hit', 1],
    ]);
    await expectNoSecrets(o, [one.accessToken, sandbox.credentials.accessKey, sandbox.credentials.secretKey, 'lock-user']);
  });

  test('the inbox: the handler span (queued, then duplicate with its inbox stage), a CONSUMER span per worker run', async () => {
    o = otel();
    const client = await connect();
    const inbox = createRedisInbox(client, {
      prefix: 'otel-inbox-' + Date.now() + ':',
      pollMs: 10,
      leaseMs: 1500,
      timeoutMs: 500,
      maxAttempts: 2,
      retryDelayMs: () => 20,
      telemetry: o.telemetry,
    });
    const handler = createWebhookHandler({ secret: webhookSecret, inbox, onError: () => {}, telemetry: o.telemetry });
    const good = bodyOf(snapshot('SO-otel-1', '2024-06-01T12:00:00+08:00'));
    const bad = bodyOf(snapshot('SO-otel-2', '2024-06-01T12:00:00+08:00'));
    expect((await post(handler, good)).status).toBe(202);
    expect((await post(handler, good)).status).toBe(200);
    expect((await post(handler, bad)).status).toBe(202);
    const pushes = o.named('channel.webhook');
    expect(pushes.map((s) => [s.attributes['http.response.status_code'], s.attributes['channel.webhook.outcome']])).toEqual([
      [202, 'queued'],
      [200, 'duplicate'],
      [202, 'queued'],
    ]);
    expect(o.named('channel.webhook.inbox').map((s) => [parentOf(s), s.attributes['channel.inbox.result']])).toEqual([
      [pushes[0].spanContext().spanId, 'stored'],
      [pushes[1].spanContext().spanId, 'duplicate'],
      [pushes[2].spanContext().spanId, 'stored'],
    ]);
    const worker = inbox.process({
      onError: () => {},
      onLogisticsUpdated: (event) => {
        o.tracer.startSpan('save').end();
        if (event.logistics.order_no === 'SO-otel-2') throw new RangeError('no such order SO-otel-2');
      },
    });
    open.push(worker);
    await until(async () => (await inbox.stats()).deadLetters === 1 && o.named('channel.inbox.process').length === 3, 'three runs and a dead letter');
    const runs = o.named('channel.inbox.process');
    expect(runs.map((s) => [s.kind, s.attributes, s.status.code])).toEqual(
      expect.arrayContaining([
        [CONSUMER, { 'channel.inbox.attempt': 1, 'channel.inbox.outcome': 'processed', 'channel.webhook.event': 'logistics.updated' }, 0],
        [
          CONSUMER,
          { 'channel.inbox.attempt': 1, 'channel.inbox.outcome': 'retry', 'error.type': 'RangeError', 'channel.webhook.event': 'logistics.updated' },
          ERROR,
        ],
        [
          CONSUMER,
          { 'channel.inbox.attempt': 2, 'channel.inbox.outcome': 'dead_letter', 'error.type': 'RangeError', 'channel.webhook.event': 'logistics.updated' },
          ERROR,
        ],
      ]),
    );
    // The callback's spans are the run's children.
    expect(o.named('save').map(parentOf).toSorted()).toEqual(runs.map((s) => s.spanContext().spanId).toSorted());
    const counted = (await o.points()).filter((p) => p.name === 'channel.server.inbox.runs').map((p) => [p.attributes['channel.inbox.outcome'], p.value]);
    expect(counted.toSorted()).toEqual([
      ['dead_letter', 1],
      ['processed', 1],
      ['retry', 1],
    ]);
    await expectNoSecrets(o, [webhookSecret, 'SO-otel-1', 'SO-otel-2', 'no such order']);
  });

  test.each(brokenTelemetries())(
    'inbox workers with %s: every push runs, retries and dead letters included; close() resolves; nothing rejects unhandled',
    async (_what, telemetry) => {
      const client = await connect();
      const inbox = createRedisInbox(client, {
        pollMs: 10,
        leaseMs: 1500,
        timeoutMs: 500,
        maxAttempts: 2,
        retryDelayMs: () => 20,
        prefix: 'broken-otel:' + Math.random() + ':',
        telemetry,
      });
      // The handler's side: broken-telemetry.test.ts.
      const handler = createWebhookHandler({ secret: webhookSecret, inbox, onError: () => {} });
      const runs: string[] = [];
      const stages: string[] = [];
      const unhandled = await unhandledDuring(async () => {
        for (const order of ['SO-ok-1', 'SO-ok-2', 'SO-fails'])
          expect((await post(handler, bodyOf(snapshot(order, '2024-06-01T12:00:00+08:00')))).status).toBe(202);
        const worker = inbox.process({
          concurrency: 2,
          onError: (_error, info) => void stages.push(info.stage),
          onLogisticsUpdated: ({ logistics }, { attempt }) => {
            runs.push(logistics.order_no + '#' + attempt);
            if (logistics.order_no === 'SO-fails') throw new Error('database down');
          },
        });
        await until(async () => (await inbox.stats()).deadLetters === 1 && runs.length === 4, 'the runs and the dead letter');
        await worker.close();
      });
      expect(runs.toSorted()).toEqual(['SO-fails#1', 'SO-fails#2', 'SO-ok-1#1', 'SO-ok-2#1']);
      expect(stages.toSorted()).toEqual(['callback', 'dead-letter']);
      expect(unhandled).toEqual([]);
    },
  );

  test("createRedisInbox's telemetry option is checked like the others", async () => {
    const client = await connect();
    expect(() => createRedisInbox(client, { telemetry: { tracer: 1 } } as never)).toThrow(ConfigError);
    expect(() => createRedisInbox(client, { telemetry: { tracer: 1 } } as never)).toThrow(
      /createRedisInbox: telemetry must be \{ tracer, meter, propagate \}.*; got an object with tracer 1,/,
    );
    expect(() => createRedisInbox(client, { telemetri: {} } as never)).toThrow(/did you mean "telemetry"/);
  });
});
