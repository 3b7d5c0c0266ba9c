/**
 * A push is never lost and runs the callback once across instances: two backend processes (the
 * built package), each with its own handler and ioredis client, sharing one real redis-server
 * through createRedisDedupStore, pushed to by the sandbox. The test plays the service's retries:
 * it delivers again until an answer is 2xx, as the service would after a failure. Instances are
 * SIGKILLed mid-callback; Redis is frozen (SIGSTOP) and stopped, then started again with its data.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import type { Logistics } from '../../../src/schemas/logistics.js';
import { signWebhookBody } from '../../../src/server-node.js';
import { startSandbox, type Sandbox } from '../../../src/testing.js';
import { hasRedis, startRedis, type RedisServer } from '../../helpers/redis.js';
import { sampleLogistics } from '../helpers.js';

const secret = 'whsec_instances';
// Short, so that a lapsed lease is seen quickly; the handler renews it every second.
const leaseMs = 3000;

interface Report {
  calls: number;
  processed: number;
  stages: string[];
  redis: string;
}

interface Instance {
  url: string;
  set(state: { fail?: boolean; hang?: boolean; delayMs?: number }): void;
  /** Resolves when a callback for this order has started here. */
  started(order: string): Promise<void>;
  /** What happened since the last report; then starts counting afresh. */
  report(): Promise<Report>;
  kill(): Promise<void>;
  close(): Promise<void>;
}

async function startInstance(redisUrl: string): Promise<Instance> {
  const child: ChildProcess = fork(new URL('./webhook-instance.mjs', import.meta.url), [redisUrl, secret, 'hooks:', String(leaseMs)], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const waiting: Array<{ type: string; order?: string; resolve: (message: never) => void }> = [];
  child.on('message', (message: { type: string; order?: string }) => {
    const at = waiting.findIndex((w) => w.type === message.type && (w.order === undefined || w.order === message.order));
    if (at >= 0) waiting.splice(at, 1)[0].resolve(message as never);
  });
  const next = <T>(type: string, order?: string) => new Promise<T>((resolve) => waiting.push({ type, order, resolve }));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const { port } = await next<{ port: number }>('ready');
  return {
    url: `http://127.0.0.1:${port}/webhooks/channel`,
    set: (state) => void child.send({ set: state }),
    started: (order) => next<void>('started', order),
    report: () => {
      const answer = next<Report>('report');
      child.send({ report: true });
      return answer;
    },
    kill: () => (child.kill('SIGKILL'), exited),
    close: () => (child.connected ? (child.send({ close: true }), exited) : exited),
  };
}

describe.runIf(hasRedis)('webhook dedup across instances (real redis-server, two processes)', () => {
  let redis: RedisServer;
  let sandbox: Sandbox;
  let a: Instance;
  let b: Instance;
  let order = 0;
  // A fresh order number each time, so that each push is one never seen.
  const fresh = (): Logistics => ({ ...sampleLogistics, order_no: `SO-instances-${++order}` });
  const push = (logistics: Logistics, to: Instance) => sandbox.pushLogistics(logistics, { url: to.url });
  /** The service's retries: deliver until an answer is 2xx; the statuses seen, in order. */
  async function redeliver(logistics: Logistics, to: Instance, forMs = 30_000): Promise<Array<number | undefined>> {
    const statuses: Array<number | undefined> = [];
    for (const until = Date.now() + forMs; Date.now() < until;) {
      const result = await push(logistics, to);
      statuses.push(result.status);
      if (result.ok) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    return statuses;
  }
  /** Redelivered to `to` until acknowledged: 503s while a lease lives, never a 200 duplicate, then processed once there. */
  async function processedOnceBy(to: Instance, logistics: Logistics) {
    const statuses = await redeliver(logistics, to);
    expect(statuses.at(-1)).toBe(200);
    expect(statuses.slice(0, -1).every((status) => status === 503)).toBe(true);
    const report = await to.report();
    expect([report.calls, report.processed]).toEqual([1, 1]);
    expect(report.stages.filter((stage) => stage === 'duplicate/200')).toEqual([]);
  }
  const replaceA = async () => {
    await a.kill();
    a = await startInstance(redis.url);
  };

  beforeAll(async () => {
    // An append-only file, so that a Redis stopped and started again keeps its keys (as a real one does).
    [redis, sandbox] = await Promise.all([startRedis({ persist: true }), startSandbox({ webhookSecret: secret })]);
    [a, b] = await Promise.all([startInstance(redis.url), startInstance(redis.url)]);
  }, 30_000);
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await Promise.all([redis?.stop(), sandbox?.close()]);
  });
  afterEach(async () => {
    redis.resume();
    a.set({ fail: false, hang: false, delayMs: 0 });
    b.set({ fail: false, hang: false, delayMs: 0 });
    await Promise.all([a.report(), b.report()]);
  });

  // #30.4: the instance that found the other's lease answered 503 at once, though that delivery
  // finished a moment later: the service recorded a failure for a push that was processed.
  test('the same push to both instances at once, 5 times (a 50 ms callback) -> 10 answers 2xx: one runs the callback, the other waits for it and answers 200 duplicate', async () => {
    a.set({ delayMs: 50 });
    b.set({ delayMs: 50 });
    const statuses: Array<number | undefined> = [];
    for (let i = 0; i < 5; i++) {
      const logistics = fresh();
      statuses.push(...(await Promise.all([push(logistics, a), push(logistics, b)])).map((r) => r.status));
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 200]);
    const reports = await Promise.all([a.report(), b.report()]);
    expect(reports[0].processed + reports[1].processed).toBe(5);
    expect([...reports[0].stages, ...reports[1].stages]).toEqual(['duplicate/200', 'duplicate/200', 'duplicate/200', 'duplicate/200', 'duplicate/200']);
  });

  // #30.3: the lease of a callback that never settled was renewed for as long as its instance
  // lived: 3 of 3 redeliveries over 31 s got 503.
  test("A's callback never settles (A stays up) -> A answers 500 at callbackTimeoutMs (15 s) and lets its lease lapse; a redelivery to B is then processed", async () => {
    a.set({ hang: true });
    const logistics = fresh();
    const started = performance.now();
    const first = push(logistics, a); // the sandbox stops waiting at 8 s, as the service does
    await a.started(logistics.order_no);
    const statuses = await redeliver(logistics, b, 40_000);
    const ms = performance.now() - started;
    expect({ last: statuses.at(-1), within: ms < 15_000 + leaseMs + 5_000 + 3_000 }).toEqual({ last: 200, within: true });
    expect((await first).ok).toBe(false);
    const [ra, rb] = await Promise.all([a.report(), b.report()]);
    expect([ra.calls, ra.processed, rb.calls, rb.processed]).toEqual([1, 0, 1, 1]);
    expect(ra.stages).toContain('callback/500');
  }, 60_000);

  test('instance A SIGKILLed mid-callback -> the redelivery to B runs the callback (1 processed, 0 lost)', async () => {
    a.set({ hang: true });
    const logistics = fresh();
    const first = push(logistics, a);
    await a.started(logistics.order_no);
    await replaceA();
    expect((await first).ok).toBe(false); // the service saw the connection die
    await processedOnceBy(b, logistics);
  });

  test("A's callback throws while a redelivery reaches B -> B, waiting for A's outcome, finds the lease given back and processes it (200, not a duplicate)", async () => {
    a.set({ delayMs: 1000, fail: true });
    const logistics = fresh();
    const first = push(logistics, a);
    await a.started(logistics.order_no);
    const during = await push(logistics, b);
    expect(during.status).toBe(200);
    expect((await first).status).toBe(500);
    const [ra, rb] = await Promise.all([a.report(), b.report()]);
    expect([ra.processed, rb.calls, rb.processed]).toEqual([0, 1, 1]);
    expect(rb.stages).toEqual([]);
  });

  test("A's callback outlives the service's 8-second window, then fails -> a redelivery meanwhile waits for it and is processed by B", async () => {
    a.set({ delayMs: 9000, fail: true });
    const logistics = fresh();
    const first = await push(logistics, a); // the sandbox stops waiting at 8 s, as the service does
    expect(first).toMatchObject({ ok: false, error: 'timeout after 8000 ms' });
    // A's callback is still running, its lease renewed; it fails a second later: B, waiting for
    // its outcome, then runs the callback itself.
    const during = await push(logistics, b);
    expect(during.status).toBe(200);
    const [ra, rb] = await Promise.all([a.report(), b.report()]);
    expect([ra.calls, ra.processed, rb.processed]).toEqual([1, 0, 1]);
    expect(ra.stages).toContain('callback/500');
  }, 40_000);

  test("a redelivery during A's live lease, A not done within 5 s -> 503 with Retry-After after that wait; after A succeeded -> 200 duplicate, no second callback", async () => {
    a.set({ delayMs: 6500 });
    const logistics = fresh();
    const first = push(logistics, a);
    await a.started(logistics.order_no);
    const body = JSON.stringify({ event: 'logistics.updated', logistics }); // the bytes the sandbox sends
    const headers = { 'content-type': 'application/json', 'x-channel-webhook-signature': await signWebhookBody(body, secret) };
    const asked = performance.now();
    const during = await fetch(b.url, { method: 'POST', headers, body });
    expect(performance.now() - asked).toBeGreaterThan(4500); // it waited for A's outcome
    expect([during.status, during.headers.get('retry-after'), await during.json()]).toEqual([
      503,
      '3',
      { error: 'this push is being processed by another delivery; retry later' },
    ]);
    expect((await first).status).toBe(200);
    const after = await fetch(b.url, { method: 'POST', headers, body });
    expect([after.status, await after.json()]).toEqual([200, { ok: true, duplicate: true }]);
    const [ra, rb] = await Promise.all([a.report(), b.report()]);
    expect([ra.processed, rb.calls]).toEqual([1, 0]);
  });

  test('Redis frozen (SIGSTOP) during a push: a push meanwhile is processed within the window; the push whose instance died is processed once Redis answers', async () => {
    a.set({ hang: true });
    const held = fresh();
    const first = push(held, a);
    await a.started(held.order_no);
    redis.pause();
    await replaceA();
    await first;
    // Frozen: every dedup call times out (dedupTimeoutMs 300), so B processes without dedup rather
    // than refuse: a repeat is harmless to an idempotent upsert, a refusal may be the last delivery.
    const meanwhile = await push(fresh(), b);
    expect(meanwhile.status).toBe(200); // a status at all: answered within the 8 s window
    const frozen = await b.report();
    expect([frozen.processed, frozen.stages.includes('dedup')]).toEqual([1, true]);
    redis.resume();
    await processedOnceBy(b, held);
  });

  test('Redis gone (stopped) mid-callback: pushes meanwhile are processed; the push that failed then is processed after Redis is back with its data', async () => {
    a.set({ delayMs: 1000, fail: true });
    const held = fresh();
    const first = push(held, a);
    await a.started(held.order_no);
    await redis.down();
    // Gone: the client says so at once; the push is processed without dedup, within the window.
    const meanwhile = await push(fresh(), b);
    expect(meanwhile.status).toBe(200);
    expect((await first).status).toBe(500); // A's release could not reach Redis
    expect((await b.report()).stages).toContain('dedup');
    await redis.up(); // with its append-only file: the held push's key is back
    await expect.poll(async () => (await b.report()).redis, { timeout: 10_000, interval: 200 }).toBe('ready');
    await processedOnceBy(b, held);
  }, 30_000);
});
