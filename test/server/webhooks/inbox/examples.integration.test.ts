/**
 * examples/backend/webhook-inbox.ts and examples/backend/webhook-inbox-bullmq.ts, as docs/guide/webhooks.md shows
 * them: run against the sandbox and a real redis-server (the BullMQ recipe with the real `bullmq`,
 * a worker process SIGKILLed mid-job included), and type-checked against the built package as a
 * user's project would see them; the set-up of its "Run it" (inbox-receiver.ts, inbox-worker.ts)
 * run as the commands there run it, each in a process of its own.
 */
import { execFile, fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { Redis } from 'ioredis';
import { createRedisInbox, toNodeHandler, type Logistics, type RedisInbox, type WebhookHandler } from '../../../../src/server-node.js';
import { startSandbox, type Sandbox } from '../../../../src/testing.js';
import { hasRedis, startRedis, type RedisServer } from '../../../helpers/redis.js';
import { snapshot, until, webhookSecret } from './inbox-helpers.js';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function serve(webhook: WebhookHandler): Promise<{ url: string; server: Server }> {
  const server = createServer(toNodeHandler(webhook));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}/webhooks/channel` };
}

describe.runIf(hasRedis)('the inbox examples', () => {
  let redis: RedisServer;
  let sandbox: Sandbox;
  beforeAll(async () => {
    [redis, sandbox] = await Promise.all([startRedis(), startSandbox({ webhookSecret })]);
    vi.stubEnv('REDIS_URL', redis.url);
    vi.stubEnv('CHANNEL_WEBHOOK_SECRET', webhookSecret);
  });
  afterAll(async () => {
    vi.unstubAllEnvs();
    await Promise.all([redis?.stop(), sandbox?.close()]);
  });

  test('examples/backend/webhook-inbox.ts: pushes answered 202 at once, saved by the worker; close() on SIGTERM drains', async () => {
    const app = (await import(/* @vite-ignore */ root + 'examples/backend/webhook-inbox.ts')) as {
      webhook: WebhookHandler;
      inbox: RedisInbox;
      redis: { disconnect(): void };
      startWorker(save: (logistics: Logistics) => Promise<void>): { close(): Promise<void> };
    };
    const { server, url } = await serve(app.webhook);
    try {
      const saved: string[] = [];
      for (let i = 0; i < 5; i++) expect((await sandbox.pushLogistics(snapshot('SO-example-' + i, '2024-06-01T12:00:00+08:00'), { url })).status).toBe(202);
      const worker = app.startWorker(async (logistics) => void saved.push(logistics.order_no));
      await until(() => saved.length === 5, 'five saves');
      await worker.close();
      expect(await app.inbox.stats()).toMatchObject({ pending: 0, processing: 0 });
    } finally {
      server.close();
      app.redis.disconnect();
    }
  });

  test('examples/backend/webhook-inbox-bullmq.ts with the real bullmq: a repeat stored once; a worker SIGKILLed mid-job leaves it to another; the newer snapshot kept', async () => {
    const example = root + 'examples/backend/webhook-inbox-bullmq.ts';
    const app = (await import(/* @vite-ignore */ example)) as {
      webhook: WebhookHandler;
      queue: { getJobCounts(...types: string[]): Promise<Record<string, number>>; close(): Promise<void> };
      connection: { disconnect(): void };
      startWorker(store: { get(o: string): Promise<Logistics | undefined>; put(l: Logistics): Promise<void> }, options?: object): { close(): Promise<void> };
    };
    // The same worker in a process of its own (the example bundled, its packages left to node_modules), to be killed.
    mkdirSync(join(root, '.tmp'), { recursive: true });
    const dir = mkdtempSync(join(root, '.tmp', 'bullmq-'));
    const { server, url } = await serve(app.webhook);
    try {
      await build({
        entryPoints: [example],
        bundle: true,
        platform: 'node',
        format: 'esm',
        packages: 'external',
        outfile: join(dir, 'example.mjs'),
        logLevel: 'silent',
      });
      writeFileSync(
        join(dir, 'doomed.mjs'),
        "import { startWorker } from './example.mjs';\n" +
          "startWorker({ get: async () => undefined, put: async () => { process.send('started'); await new Promise(() => {}); } }, { lockDuration: 1000, stalledInterval: 500 });\n",
      );
      const doomed = fork(join(dir, 'doomed.mjs'), { env: { ...process.env }, stdio: 'ignore' });
      const started = new Promise((resolve) => doomed.once('message', resolve));
      const older = snapshot('SO-bull', '2024-06-01T12:00:00+08:00', ' older');
      expect((await sandbox.pushLogistics(older, { url })).status).toBe(202);
      expect((await sandbox.pushLogistics(older, { url })).ok).toBe(true);
      await started; // the doomed worker holds the job, mid-put
      doomed.kill('SIGKILL');
      expect(await app.queue.getJobCounts('waiting', 'active', 'completed', 'delayed')).toMatchObject({ active: 1 });
      const rows = new Map<string, Logistics>();
      const puts: string[] = [];
      const store = {
        get: async (order: string) => rows.get(order),
        put: async (logistics: Logistics) => void (rows.set(logistics.order_no, logistics), puts.push(logistics.shipments[0].events![0].desc!)),
      };
      const worker = app.startWorker(store, { lockDuration: 1000, stalledInterval: 500 });
      try {
        await until(() => puts.length === 1, 'the stalled job to run on the live worker', 20_000);
        // A newer snapshot, then the older one again (a late redelivery is a new body here: another time).
        expect((await sandbox.pushLogistics(snapshot('SO-bull', '2024-06-01T15:00:00+08:00', ' newer'), { url })).ok).toBe(true);
        await until(() => puts.length === 2, 'the newer snapshot');
        expect((await sandbox.pushLogistics(snapshot('SO-bull', '2024-06-01T13:00:00+08:00', ' late'), { url })).ok).toBe(true);
        await until(async () => (await app.queue.getJobCounts('completed')).completed === 3, 'three jobs completed');
        await sleep(100);
        expect(puts).toEqual(['at 2024-06-01T12:00:00+08:00 older', 'at 2024-06-01T15:00:00+08:00 newer']);
        expect(rows.get('SO-bull')!.shipments[0].events![0].desc).toBe('at 2024-06-01T15:00:00+08:00 newer');
      } finally {
        await worker.close();
      }
    } finally {
      server.close();
      await app.queue.close();
      app.connection.disconnect();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.runIf(hasRedis)('the inbox set-up of docs/guide/webhooks.md ("Run it")', () => {
  test('examples/backend/inbox-receiver.ts and examples/backend/inbox-worker.ts in processes of their own, on the redis-server of the set-up: pushes answered 202, each saved once; the worker counted, and SIGTERM ends both cleanly', async () => {
    // The Redis of the set-up's first line, with its arguments as written there.
    const doc = readFileSync(root + 'docs/guide/webhooks.md', 'utf8');
    const args = /^redis-server (.+?)(?:\s+&)?\s+#/m.exec(doc)![1].split(/\s+/);
    expect(args).toEqual(expect.arrayContaining(['--appendonly', 'yes', '--maxmemory-policy', 'noeviction']));
    const [own, sandbox] = await Promise.all([startRedis({ args }), startSandbox({ webhookSecret: 'whsec_dev' })]);
    mkdirSync(join(root, '.tmp'), { recursive: true });
    const dir = mkdtempSync(join(root, '.tmp', 'inbox-set-up-'));
    const children: ChildProcess[] = [];
    try {
      for (const name of ['inbox-receiver', 'inbox-worker'])
        await build({
          entryPoints: [root + 'examples/backend/' + name + '.ts'],
          bundle: true,
          platform: 'node',
          format: 'esm',
          packages: 'external',
          outfile: join(dir, name + '.mjs'),
          logLevel: 'silent',
        });
      const env = { ...process.env, REDIS_URL: own.url, CHANNEL_WEBHOOK_SECRET: 'whsec_dev', PORT: '0' };
      const start = (name: string) => {
        const child = spawn(process.execPath, [join(dir, name + '.mjs')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
        children.push(child);
        const lines: string[] = [];
        child.stdout!.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
        child.stderr!.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
        return { child, lines, exited: new Promise<number | null>((resolve) => child.once('exit', resolve)) };
      };
      const receiver = start('inbox-receiver');
      const worker = start('inbox-worker');
      await until(() => receiver.lines.length > 0 && worker.lines.includes('worker started'), 'both to start', 15_000);
      const url = /^receiving pushes on (http:\/\/127\.0\.0\.1:\d+\/webhooks\/channel)$/.exec(receiver.lines[0])![1];
      // What `channel-sandbox push --to <url>` sends, then two more orders.
      expect((await sandbox.pushLogistics('SO20240601001', { url })).status).toBe(202);
      for (const order of ['SO-set-up-1', 'SO-set-up-2'])
        expect((await sandbox.pushLogistics(snapshot(order, '2024-06-01T12:00:00+08:00'), { url })).status).toBe(202);
      expect((await sandbox.pushLogistics('SO20240601001', { url })).status).toBe(200); // a repeat: stored once
      await until(() => worker.lines.filter((line) => line.startsWith('saved ')).length === 3, 'three saves');
      expect(worker.lines.filter((line) => line.startsWith('saved ')).toSorted()).toEqual([
        'saved SO-set-up-1 in_transit',
        'saved SO-set-up-2 in_transit',
        'saved SO20240601001 in_transit',
      ]);
      const redis = new Redis(own.url);
      try {
        expect(await createRedisInbox(redis, { prefix: 'myapp:' }).stats()).toMatchObject({
          pending: 0,
          processing: 0,
          workers: 1,
          memory: { policy: 'noeviction' },
        });
        expect(await redis.config('GET', 'appendonly')).toEqual(['appendonly', 'yes']);
      } finally {
        redis.disconnect();
      }
      for (const { child } of [receiver, worker]) child.kill('SIGTERM');
      expect(await Promise.all([receiver.exited, worker.exited])).toEqual([0, 0]);
    } finally {
      for (const child of children) child.kill('SIGKILL');
      await Promise.all([own.stop(), sandbox.close()]);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

test.each([
  'examples/backend/webhook-inbox.ts',
  'examples/backend/webhook-inbox-bullmq.ts',
  'examples/backend/inbox-receiver.ts',
  'examples/backend/inbox-worker.ts',
])('%s type-checks against the built package (strict, NodeNext)', async (example) => {
  const tsc = root + 'node_modules/typescript/bin/tsc';
  const args = ['--ignoreConfig', '--noEmit', '--strict', '--exactOptionalPropertyTypes', '--module', 'nodenext', '--moduleResolution', 'nodenext'];
  const { stdout } = await promisify(execFile)(process.execPath, [tsc, ...args, '--target', 'es2022', '--types', 'node', '--skipLibCheck', example], {
    cwd: root,
  }).catch((error: { stdout: string }) => error);
  expect(stdout).toBe('');
});
