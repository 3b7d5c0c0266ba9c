/**
 * `channel-sandbox inbox stats|dead|replay|discard|pause|resume` as an operator runs it: the built
 * dist/sandbox-cli.js in a subprocess, in the project's folder (its ioredis found from there),
 * against an inbox on a real redis-server that holds a dead letter.
 */
import { spawn } from 'node:child_process';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { createRedisInbox, createWebhookHandler, type RedisInbox } from '../../../src/server-node.js';
import { hasRedis, startRedis, type RedisServer } from '../../helpers/redis.js';
import { bodyOf, post, snapshot, until, webhookSecret } from '../../server/webhooks/inbox/inbox-helpers.js';

const cli = 'dist/sandbox-cli.js';

function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { env: { ...process.env, REDIS_URL: '', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe.runIf(hasRedis)('channel-sandbox inbox', () => {
  let server: RedisServer;
  let redis: Redis;
  let inbox: RedisInbox;
  const prefix = 'ops:';
  beforeAll(async () => {
    server = await startRedis();
    redis = new Redis(server.url);
    inbox = createRedisInbox(redis, { prefix, pollMs: 10, leaseMs: 1500, timeoutMs: 500, maxAttempts: 1 });
    const handler = createWebhookHandler({ secret: webhookSecret, inbox });
    await post(handler, bodyOf(snapshot('SO-ops-dead', '2024-06-01T12:00:00+08:00')));
    const worker = inbox.process({
      onError: () => {},
      onLogisticsUpdated: () => {
        throw new Error('the warehouse API answered 502');
      },
    });
    await until(async () => (await inbox.stats()).deadLetters === 1, 'the dead letter');
    await worker.close();
    await post(handler, bodyOf(snapshot('SO-ops-pending', '2024-06-01T12:00:00+08:00')));
  });
  afterAll(async () => {
    redis?.disconnect();
    await server?.stop();
  });

  test('stats and dead, as text and as JSON; --redis or $REDIS_URL', async () => {
    const text = await run(['inbox', 'stats', '--redis', server.url, '--prefix', prefix]);
    expect(text).toMatchObject({ code: 0, stderr: '' });
    expect(text.stdout).toMatch(/^pending +1 .*\nprocessing +0 .*\nretrying +0 .*\ndead letters +1 /);
    const json = await run(['inbox', 'stats', '--prefix', prefix, '--json'], { REDIS_URL: server.url });
    expect(JSON.parse(json.stdout)).toMatchObject({ pending: 1, processing: 0, retrying: 0, deadLetters: 1 });
    const dead = await run(['inbox', 'dead', '--redis', server.url, '--prefix', prefix]);
    expect(dead.stdout).toMatch(/^\d+-\d+ {2}SO-ops-dead {2}1 attempts, failed .*\n {2}the warehouse API answered 502\n$/);
    const [letter] = JSON.parse((await run(['inbox', 'dead', '--redis', server.url, '--prefix', prefix, '--json'])).stdout);
    expect(letter).toMatchObject({ orderNo: 'SO-ops-dead', attempts: 1, error: 'the warehouse API answered 502' });
  });

  test("replay <id> takes the id the worker's dead-letter report printed; --since the letters put aside since then", async () => {
    const own = createRedisInbox(redis, { prefix: 'ops-log:', pollMs: 10, leaseMs: 1500, timeoutMs: 500, maxAttempts: 1 });
    const handler = createWebhookHandler({ secret: webhookSecret, inbox: own });
    const printed: string[] = [];
    const error = vi.spyOn(console, 'error').mockImplementation((line: string) => void printed.push(line));
    let fail = true;
    const runs: string[] = [];
    const worker = own.process({
      onLogisticsUpdated: ({ logistics }) => {
        if (fail) throw new Error('the warehouse API answered 502');
        runs.push(logistics.order_no);
      },
    });
    try {
      await post(handler, bodyOf(snapshot('SO-ops-log', '2024-06-01T12:00:00+08:00')));
      await until(() => printed.length === 1, 'the dead-letter report');
      const id = /dead-letter (\S+):/.exec(printed[0])![1];
      fail = false;
      expect(await run(['inbox', 'replay', id, '--redis', server.url, '--prefix', 'ops-log:'])).toMatchObject({
        code: 0,
        stdout: '1 dead letter back in the inbox\n',
      });
      await until(() => runs.length === 1, 'the replayed push to run');
      expect(printed[0]).toMatch(
        /^\[channel-sdk\] inbox dead-letter \d+-\d+: the warehouse API answered 502 \(to run it again: channel-sandbox inbox replay \d+-\d+, or inbox.replay\(id\)\)$/,
      );
      fail = true;
      const since = new Date().toISOString();
      await post(handler, bodyOf(snapshot('SO-ops-since', '2024-06-01T12:00:00+08:00')));
      await until(async () => (await own.stats()).deadLetters === 1, 'a second dead letter');
      fail = false;
      expect(await run(['inbox', 'replay', '--since', '1h', '--redis', server.url, '--prefix', 'ops-log:'])).toMatchObject({
        code: 0,
        stdout: '1 dead letter back in the inbox\n',
      });
      await until(() => runs.length === 2, 'the second to run');
      expect((await run(['inbox', 'replay', '--since', since, '--redis', server.url, '--prefix', 'ops-log:'])).stdout).toBe(
        '0 dead letters back in the inbox\n',
      );
      expect((await run(['inbox', 'replay', '--since', 'last week', '--redis', server.url])).stderr).toMatch(/--since must be a time/);
      expect((await run(['inbox', 'replay', id, '--all', '--redis', server.url])).code).toBe(2);
    } finally {
      await worker.close();
      error.mockRestore();
    }
  });

  test('pause stops every worker (stats says so), resume lets them go on; stats shows the workers seen and Redis memory', async () => {
    const own = createRedisInbox(redis, { prefix: 'ops-pause:', pollMs: 10, leaseMs: 1500, timeoutMs: 500 });
    const handler = createWebhookHandler({ secret: webhookSecret, inbox: own });
    const runs: string[] = [];
    const worker = own.process({ onLogisticsUpdated: ({ logistics }) => void runs.push(logistics.order_no) });
    try {
      await until(async () => (await own.stats()).workers === 1, 'the worker seen');
      expect(await run(['inbox', 'pause', '--redis', server.url, '--prefix', 'ops-pause:'])).toMatchObject({
        code: 0,
        stdout: 'every worker paused: pushes are stored, none is taken (channel-sandbox inbox resume)\n',
      });
      await post(handler, bodyOf(snapshot('SO-ops-paused', '2024-06-01T12:00:00+08:00')));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(runs).toEqual([]);
      const stats = await run(['inbox', 'stats', '--redis', server.url, '--prefix', 'ops-pause:']);
      expect(stats.stdout).toMatch(
        /\nworkers +1 \(seen in the last minute\), paused \(channel-sandbox inbox resume\)\nredis memory +[\d.]+ MiB of no maxmemory, maxmemory-policy noeviction\n$/,
      );
      expect(JSON.parse((await run(['inbox', 'stats', '--redis', server.url, '--prefix', 'ops-pause:', '--json'])).stdout)).toMatchObject({
        pending: 1,
        workers: 1,
        paused: true,
      });
      expect((await run(['inbox', 'resume', '--redis', server.url, '--prefix', 'ops-pause:'])).stdout).toBe('workers take pushes again\n');
      await until(() => runs.length === 1, 'the push to run once resumed');
    } finally {
      await worker.close();
    }
  });

  test('stats through a Redis user whose ACL refuses INFO (-@dangerous): a line says maxmemory-policy is unchecked, not nothing', async () => {
    await redis.call('ACL', 'SETUSER', 'noinfo', 'on', '>pw', '~*', '+@all', '-@dangerous');
    const url = server.url.replace('redis://', 'redis://noinfo:pw@');
    const stats = await run(['inbox', 'stats', '--redis', url, '--prefix', prefix]);
    // (ioredis's own ready check prints its refused INFO to stderr.)
    expect(stats.code).toBe(0);
    expect(stats.stdout).toMatch(
      /\nredis memory +unknown: Redis refused INFO memory to this user, so maxmemory-policy \(the inbox needs noeviction\) is unchecked\n$/,
    );
  });

  test('--key-prefix reaches the inbox of an app whose ioredis client has keyPrefix: pause holds its workers, stats counts its pushes, doctor sees its worker', async () => {
    const app = new Redis(server.url, { keyPrefix: 'ops-app:' });
    const own = createRedisInbox(app, { prefix: 'ops-kp:', pollMs: 10, leaseMs: 1500, timeoutMs: 500 });
    const handler = createWebhookHandler({ secret: webhookSecret, inbox: own });
    const runs: string[] = [];
    const worker = own.process({ onLogisticsUpdated: ({ logistics }) => void runs.push(logistics.order_no) });
    const at = ['--redis', server.url, '--prefix', 'ops-kp:', '--key-prefix', 'ops-app:'];
    try {
      expect(await run(['inbox', 'pause', ...at])).toMatchObject({ code: 0 });
      await post(handler, bodyOf(snapshot('SO-ops-kp', '2024-06-01T12:00:00+08:00')));
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(runs).toEqual([]);
      expect(JSON.parse((await run(['inbox', 'stats', ...at, '--json'])).stdout)).toMatchObject({ pending: 1, paused: true });
      // doctor reads the same inbox with it: the worker seen, the push waiting.
      const doctor = JSON.parse((await run(['doctor', ...at, '--json'])).stdout) as {
        parts: Array<{ checks: Array<{ id: string; status: string; detail: string }> }>;
      };
      const checks = doctor.parts.flatMap((part) => part.checks);
      expect(checks.find((check) => check.id === 'workers')).toMatchObject({ status: 'pass', detail: '1 recently' });
      expect(checks.find((check) => check.id === 'oldest')).toMatchObject({ status: 'pass' });
      expect(await run(['inbox', 'resume', ...at])).toMatchObject({ code: 0 });
      await until(() => runs.length === 1, 'the push to run once resumed');
    } finally {
      await worker.close();
      app.disconnect();
    }
  });

  test("doctor names an inbox prefix used under another ioredis keyPrefix: a receiver deployed with keyPrefix and workers without it (pushes pile up unseen, each side's stats calm)", async () => {
    const receiverClient = new Redis(server.url, { keyPrefix: 'ops-rx:' });
    const receiver = createRedisInbox(receiverClient, { prefix: 'ops-split:', pollMs: 10, timeoutMs: 500 });
    const workers = createRedisInbox(redis, { prefix: 'ops-split:', pollMs: 10, timeoutMs: 500 });
    const runs: string[] = [];
    const worker = workers.process({ onLogisticsUpdated: ({ logistics }) => void runs.push(logistics.order_no) });
    type Check = { id: string; status: string; detail: string; fix?: string };
    const checksOf = async (args: string[], at = 'ops-split:') => {
      const out = await run(['doctor', '--redis', server.url, '--prefix', at, ...args, '--json']);
      return { code: out.code, checks: (JSON.parse(out.stdout) as { parts: Array<{ checks: Check[] }> }).parts.flatMap((part) => part.checks) };
    };
    try {
      const handler = createWebhookHandler({ secret: webhookSecret, inbox: receiver });
      for (const order of ['SO-split-1', 'SO-split-2']) expect((await post(handler, bodyOf(snapshot(order, '2024-06-01T12:00:00+08:00')))).status).toBe(202);
      await until(async () => (await workers.stats()).workers === 1, 'the worker seen');
      // The workers' side: its own inbox is empty and has a worker; the pushes wait under ops-rx:.
      const workerSide = await checksOf([]);
      expect(runs).toEqual([]);
      expect(workerSide.checks.find((check) => check.id === 'workers')).toMatchObject({ status: 'pass' });
      expect(workerSide.checks.find((check) => check.id === 'key-prefixes')).toMatchObject({
        status: 'fail',
        detail: expect.stringContaining('"ops-rx:" (2 in its stream)'),
        fix: expect.stringContaining(`channel-sandbox inbox stats --redis ${server.url} --prefix ops-split: --key-prefix ops-rx:`),
      });
      expect(workerSide.code).not.toBe(0);
      // The receiver's side: the workers' keys, without a keyPrefix, are named too.
      const receiverSide = await checksOf(['--key-prefix', 'ops-rx:']);
      expect(receiverSide.checks.find((check) => check.id === 'key-prefixes')).toMatchObject({ detail: expect.stringContaining('no keyPrefix') });
      // An inbox whose processes agree (no keyPrefix anywhere): the check passes.
      const agreed = await checksOf([], prefix);
      expect(agreed.checks.find((check) => check.id === 'key-prefixes')).toMatchObject({ status: 'pass' });
    } finally {
      await worker.close();
      receiverClient.disconnect();
    }
  });

  test('replay <id> puts it back; discard <id> drops one; an unknown id exits 1; bad arguments exit 2', async () => {
    const [letter] = await inbox.deadLetters();
    expect(await run(['inbox', 'replay', letter.id, '--redis', server.url, '--prefix', prefix])).toMatchObject({
      code: 0,
      stdout: '1 dead letter back in the inbox\n',
    });
    expect(await inbox.stats()).toMatchObject({ pending: 2, deadLetters: 0 });
    expect(await run(['inbox', 'replay', letter.id, '--redis', server.url, '--prefix', prefix])).toMatchObject({
      code: 1,
      stdout: `no dead letter ${letter.id} (ids: channel-sandbox inbox dead)\n`,
    });
    expect((await run(['inbox', 'discard', letter.id, '--redis', server.url, '--prefix', prefix])).stdout).toBe(`no dead letter ${letter.id}\n`);
    const missing = await run(['inbox', 'replay', '--redis', server.url]);
    expect(missing).toMatchObject({ code: 2 });
    expect(missing.stderr).toMatch(/--all for every one/);
    expect((await run(['inbox', 'replay', 'nonsense', '--redis', server.url])).code).toBe(2);
    expect((await run(['inbox', 'stats'])).stderr).toMatch(/where is Redis\?/);
    expect((await run(['inbox', 'purge', '--redis', server.url])).stderr).toMatch(/inbox stats\|dead\|replay\|discard\|pause\|resume/);
    expect((await run(['inbox', 'stats', '--redis', 'http://x'])).stderr).toMatch(/must be a redis:\/\/ URL/);
  });
});
