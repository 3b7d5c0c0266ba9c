import { afterEach, describe, expect, test, vi } from 'vitest';
import { ConfigError, createMemoryDedupStore, createWebhookHandler, signWebhookBody, type WebhookDedupStore, type WebhookErrorInfo } from '../../src/server-node.js';
import { doors } from './doors.js';
import { captureConsole } from './helpers.js';
import { PROJECT_BODY } from './implementations.js';

const secret = 'test_secret_123';
const push = async () => ({ body: PROJECT_BODY, headers: { 'x-channel-webhook-signature': await signWebhookBody(PROJECT_BODY, secret) } });

function setup(dedup: WebhookDedupStore, callback: () => unknown = () => {}, extra: { dedupTimeoutMs?: number } = {}) {
  const calls: string[] = [];
  const reported: Array<[unknown, WebhookErrorInfo]> = [];
  const handler = createWebhookHandler({
    secret,
    dedup,
    ...extra,
    onLogisticsUpdated: async (event) => {
      calls.push(event.logistics.order_no);
      await callback();
    },
    onError: (error, info) => void reported.push([error, info]),
  });
  return { handler, calls, reported, stages: () => reported.map(([, info]) => `${info.stage}/${info.level}`) };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('createMemoryDedupStore', () => {
  test('claims once; a released key can be claimed again', () => {
    const store = createMemoryDedupStore();
    expect([store.claim('a'), store.claim('a'), store.claim('b')]).toEqual([true, false, true]);
    store.release('a');
    expect(store.claim('a')).toBe(true);
  });

  test('forgets a key after ttlSeconds', () => {
    vi.useFakeTimers({ now: 0 });
    const store = createMemoryDedupStore({ ttlSeconds: 60 });
    expect(store.claim('a')).toBe(true);
    vi.setSystemTime(59_999);
    expect(store.claim('a')).toBe(false);
    vi.setSystemTime(60_000);
    expect(store.claim('a')).toBe(true);
  });

  test('keeps at most maxEntries keys, dropping the oldest', () => {
    const store = createMemoryDedupStore({ maxEntries: 2 });
    store.claim('a');
    store.claim('b');
    store.claim('c');
    expect([store.claim('a'), store.claim('c')]).toEqual([true, false]);
  });

  test('refuses nonsense options', () => {
    expect(() => createMemoryDedupStore({ ttlSeconds: 0 })).toThrow(ConfigError);
    expect(() => createMemoryDedupStore({ maxEntries: 0 })).toThrow(ConfigError);
    expect(() => createWebhookHandler({ secret, dedup: {} as WebhookDedupStore, onLogisticsUpdated: () => {} })).toThrow(/claim\(key\) and release\(key\)/);
  });
});

describe.each(doors)('webhook dedup through %s', (_door, open) => {
  test('a push delivered twice runs the callback once; the repeat gets 200 and is reported as info', async () => {
    const route = setup(createMemoryDedupStore());
    const door = await open(route.handler);
    const first = await door.send(await push());
    const second = await door.send(await push());
    await door.close();
    expect([first.status, first.json, second.status, second.json]).toEqual([200, { ok: true }, 200, { ok: true, duplicate: true }]);
    expect(route.calls).toEqual(['SO20240601001']);
    expect(route.stages()).toEqual(['duplicate/info']);
  });

  test('the callback threw -> 500 and the claim is given back, so the redelivery is processed', async () => {
    let fail = true;
    const route = setup(createMemoryDedupStore(), () => {
      if (fail) throw new Error('database down');
    });
    const door = await open(route.handler);
    expect((await door.send(await push())).status).toBe(500);
    fail = false;
    expect((await door.send(await push())).status).toBe(200);
    expect((await door.send(await push())).json).toEqual({ ok: true, duplicate: true });
    await door.close();
    expect(route.calls).toHaveLength(2);
  });
});

describe('webhook dedup', () => {
  const request = async () => new Request('http://partner.example/hook', { method: 'POST', ...(await push()) });

  test('a store that throws: the push is processed anyway (fail open) and the failure reported', async () => {
    const route = setup({
      claim: () => {
        throw new Error('redis down');
      },
      release: () => {},
    });
    expect((await route.handler(await request())).status).toBe(200);
    expect(route.calls).toHaveLength(1);
    expect(route.stages()).toEqual(['dedup/warn']);
  });

  test('a store that hangs: processed after dedupTimeoutMs, reported', async () => {
    const route = setup({ claim: () => new Promise<boolean>(() => {}), release: () => {} }, undefined, { dedupTimeoutMs: 30 });
    expect((await route.handler(await request())).status).toBe(200);
    expect(route.calls).toHaveLength(1);
    expect(route.stages()).toEqual(['dedup/warn']);
    expect((route.reported[0][0] as Error).message).toMatch(/did not answer claim within 30 ms/);
  });

  test('a release that fails after the callback failed is reported; the answer stays 500', async () => {
    const route = setup(
      {
        claim: async () => true,
        release: async () => {
          throw new Error('redis down');
        },
      },
      () => Promise.reject(new Error('database down')),
    );
    expect((await route.handler(await request())).status).toBe(500);
    expect(route.stages()).toEqual(['callback/error', 'dedup/warn']);
  });

  test('the same push arriving twice at once in one process: one callback, both answered with its outcome', async () => {
    let finish!: () => void;
    const route = setup(createMemoryDedupStore(), () => new Promise<void>((resolve) => (finish = resolve)));
    const first = route.handler(await request());
    const second = route.handler(await request());
    await vi.waitFor(() => expect(route.calls).toHaveLength(1));
    finish();
    expect([(await first).status, (await second).status]).toEqual([200, 200]);
    expect(route.calls).toHaveLength(1);
  });

  test('a push delivered to two instances sharing one store runs the callback once', async () => {
    const store = createMemoryDedupStore();
    const a = setup(store, () => new Promise((r) => setTimeout(r, 20)));
    const b = setup(store, () => new Promise((r) => setTimeout(r, 20)));
    const answers = await Promise.all([a.handler(await request()), b.handler(await request())]);
    expect(answers.map((r) => r.status)).toEqual([200, 200]);
    expect(a.calls.length + b.calls.length).toBe(1);
  });

  test('default reporting prints nothing for a duplicate', async () => {
    const handler = createWebhookHandler({ secret, dedup: createMemoryDedupStore(), onLogisticsUpdated: () => {} });
    const output = captureConsole();
    try {
      await handler(await request());
      await handler(await request());
    } finally {
      output.restore();
    }
    expect(output.lines).toEqual([]);
  });
});
