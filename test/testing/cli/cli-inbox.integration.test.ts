/**
 * `channel-sandbox inbox stats|dead|replay|discard` as an operator runs it: the built
 * dist/sandbox-cli.js in a subprocess, in the project's folder (its ioredis found from there),
 * against an inbox on a real redis-server that holds a dead letter.
 */
import { spawn } from 'node:child_process';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
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

  test('replay <id> puts it back; discard <id> drops one; an unknown id exits 1; bad arguments exit 2', async () => {
    const [letter] = await inbox.deadLetters();
    expect(await run(['inbox', 'replay', letter.id, '--redis', server.url, '--prefix', prefix])).toMatchObject({
      code: 0,
      stdout: '1 dead letter back in the inbox\n',
    });
    expect(await inbox.stats()).toMatchObject({ pending: 2, deadLetters: 0 });
    expect((await run(['inbox', 'replay', letter.id, '--redis', server.url, '--prefix', prefix])).code).toBe(1);
    expect((await run(['inbox', 'discard', letter.id, '--redis', server.url, '--prefix', prefix])).stdout).toBe(`no dead letter ${letter.id}\n`);
    const missing = await run(['inbox', 'replay', '--redis', server.url]);
    expect(missing).toMatchObject({ code: 2 });
    expect(missing.stderr).toMatch(/--all for every one/);
    expect((await run(['inbox', 'replay', 'nonsense', '--redis', server.url])).code).toBe(2);
    expect((await run(['inbox', 'stats'])).stderr).toMatch(/where is Redis\?/);
    expect((await run(['inbox', 'purge', '--redis', server.url])).stderr).toMatch(/inbox stats\|dead\|replay\|discard/);
    expect((await run(['inbox', 'stats', '--redis', 'http://x'])).stderr).toMatch(/must be a redis:\/\/ URL/);
  });
});
