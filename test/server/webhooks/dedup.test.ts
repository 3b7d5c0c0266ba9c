import { afterEach, describe, expect, test, vi } from 'vitest';
import { FULL } from '../../helpers/tier.js';
import {
  ConfigError,
  createMemoryDedupStore,
  createRedisDedupStore,
  createRedisInbox,
  createWebhookHandler,
  dedupKey,
  signWebhookBody,
  type DedupLease,
  type WebhookDedupStore,
  type WebhookErrorInfo,
  type WebhookHandlerOptions,
} from '../../../src/server-node.js';
import { doors } from '../http/doors.js';
import { captureConsole } from '../helpers.js';
import { PROJECT_BODY } from '../implementations.js';

const secret = 'test_secret_123';
const push = async () => ({ body: PROJECT_BODY, headers: { 'x-channel-webhook-signature': await signWebhookBody(PROJECT_BODY, secret) } });
const lease = (id: string, ms = 10_000): DedupLease => ({ id, ms });

function setup(dedup: WebhookDedupStore, callback: () => unknown = () => {}, extra: Partial<WebhookHandlerOptions> = {}) {
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
  return { handler, calls, reported, stages: () => reported.map(([, info]) => `${info.stage}/${info.level}${info.status ? '/' + info.status : ''}`) };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('createMemoryDedupStore', () => {
  test('claimed once; running while the lease is live; done only after complete', () => {
    const store = createMemoryDedupStore();
    expect([store.claim('a', lease('1')), store.claim('a', lease('2')), store.claim('b', lease('3'))]).toEqual(['claimed', 'running', 'claimed']);
    store.complete('a', lease('1'));
    expect(store.claim('a', lease('4'))).toBe('done');
  });

  test('a released lease lets the next delivery claim at once; a release by someone else does nothing', () => {
    const store = createMemoryDedupStore();
    store.claim('a', lease('1'));
    store.release('a', lease('2'));
    expect(store.claim('a', lease('3'))).toBe('running');
    store.release('a', lease('1'));
    expect(store.claim('a', lease('3'))).toBe('claimed');
  });

  test('a lease nobody renews lapses (its holder died): the next delivery claims it; renew keeps a live one', () => {
    vi.useFakeTimers({ now: 0 });
    const store = createMemoryDedupStore();
    expect(store.claim('dead', lease('1', 1000))).toBe('claimed');
    expect(store.claim('alive', lease('2', 1000))).toBe('claimed');
    vi.setSystemTime(900);
    expect(store.renew('alive', lease('2', 1000))).toBe(true);
    expect(store.renew('alive', lease('other', 1000))).toBe(false);
    vi.setSystemTime(1000);
    expect(store.claim('dead', lease('3', 1000))).toBe('claimed');
    expect(store.claim('alive', lease('4', 1000))).toBe('running');
    expect(store.renew('dead', lease('1', 1000))).toBe(false); // lapsed and taken: no longer its holder's
  });

  test('a late holder that succeeds marks the push done; the newer holder failing then leaves it done', () => {
    vi.useFakeTimers({ now: 0 });
    const store = createMemoryDedupStore();
    store.claim('a', lease('late', 100));
    vi.setSystemTime(200);
    expect(store.claim('a', lease('new', 100))).toBe('claimed');
    store.complete('a', lease('late', 100));
    store.release('a', lease('new', 100));
    expect(store.claim('a', lease('x', 100))).toBe('done');
  });

  test('forgets a processed key after ttlSeconds', () => {
    vi.useFakeTimers({ now: 0 });
    const store = createMemoryDedupStore({ ttlSeconds: 60 });
    store.claim('a', lease('1'));
    store.complete('a', lease('1'));
    vi.setSystemTime(59_999);
    expect(store.claim('a', lease('2'))).toBe('done');
    vi.setSystemTime(60_000);
    expect(store.claim('a', lease('3'))).toBe('claimed');
  });

  test('keeps at most maxEntries processed keys, dropping the oldest', () => {
    const store = createMemoryDedupStore({ maxEntries: 2 });
    for (const key of ['a', 'b', 'c']) store.complete(key, lease(key));
    expect([store.claim('a', lease('1')), store.claim('c', lease('2'))]).toEqual(['claimed', 'done']);
  });

  test('refuses nonsense options, naming the one meant', () => {
    expect(() => createMemoryDedupStore({ ttlSeconds: 0 })).toThrow(ConfigError);
    expect(() => createMemoryDedupStore({ maxEntries: 0 })).toThrow(/maxEntries must be a whole number of pushes from 1/);
  });

  test('ttlSeconds follows the same rule in the memory and Redis dedup stores and the inbox (#31 item 5)', () => {
    const redisShaped = { get() {}, set() {}, del() {}, eval() {}, status: 'ready' } as never;
    const inboxRedis = redisShaped;
    for (const ttlSeconds of [0, 1.5, 365 * 86_400 + 1, '60']) {
      const rule = /ttlSeconds must be a whole number of seconds from 1 to 31536000 \(e\.g\. 86400\)/;
      expect(() => createMemoryDedupStore({ ttlSeconds } as never)).toThrow(rule);
      expect(() => createRedisDedupStore(redisShaped, { ttlSeconds } as never)).toThrow(rule);
      expect(() => createRedisInbox(inboxRedis, { ttlSeconds } as never)).toThrow(rule);
    }
    for (const ttlSeconds of [1, 86_400, 365 * 86_400]) {
      expect(() => createMemoryDedupStore({ ttlSeconds })).not.toThrow();
      expect(() => createRedisDedupStore(redisShaped, { ttlSeconds })).not.toThrow();
    }
    expect(() => createMemoryDedupStore({ ttl: 60 } as never)).toThrow(/unknown createMemoryDedupStore option "ttl"; did you mean "ttlSeconds"\?/);
  });
});

describe('a custom dedup store', () => {
  test('one of the interface before leases (claim and release only) -> ConfigError saying what to add', () => {
    const legacy = { claim: () => true, release: () => {} };
    expect(() => createWebhookHandler({ secret, dedup: legacy as never, onLogisticsUpdated: () => {} })).toThrow(ConfigError);
    expect(() => createWebhookHandler({ secret, dedup: legacy as never, onLogisticsUpdated: () => {} })).toThrow(
      /claim\(key\) and release\(key\) only.*acknowledged as a duplicate and never processed\. Add renew\(key, lease\) and complete\(key, lease\)/,
    );
  });

  test('anything else without the four methods -> ConfigError naming the missing ones', () => {
    expect(() => createWebhookHandler({ secret, dedup: {} as never, onLogisticsUpdated: () => {} })).toThrow(/has no claim, renew, complete, release/);
    expect(() => createWebhookHandler({ secret, dedup: { claim() {}, release() {}, renew() {} } as never, onLogisticsUpdated: () => {} })).toThrow(
      /has no complete$/,
    );
  });

  test('a store written to the interface in a few lines (a Map here; a SQL table the same way) works', async () => {
    // What docs/guide/webhooks.md shows for "Your own store".
    const rows = new Map<string, { lease?: string; until: number }>();
    const store: WebhookDedupStore = {
      claim(key, { id, ms }) {
        const row = rows.get(key);
        if (row && row.lease === undefined) return 'done';
        if (row && row.until > Date.now()) return 'running';
        rows.set(key, { lease: id, until: Date.now() + ms });
        return 'claimed';
      },
      renew(key, { id, ms }) {
        const row = rows.get(key);
        if (row?.lease !== id) return false;
        row.until = Date.now() + ms;
        return true;
      },
      complete: (key) => void rows.set(key, { until: Infinity }),
      release: (key, { id }) => void (rows.get(key)?.lease === id && rows.delete(key)),
    };
    const route = setup(store);
    const first = await route.handler(new Request('http://partner.example/hook', { method: 'POST', ...(await push()) }));
    const second = await route.handler(new Request('http://partner.example/hook', { method: 'POST', ...(await push()) }));
    expect([first.status, await second.json()]).toEqual([200, { ok: true, duplicate: true }]);
    expect(route.calls).toHaveLength(1);
  });
});

describe.each(doors)('webhook dedup through %s', (_door, open) => {
  test('a push delivered twice runs the callback once; the repeat gets 200 duplicate, reported as info', async () => {
    const route = setup(createMemoryDedupStore());
    const door = await open(route.handler);
    const first = await door.send(await push());
    const second = await door.send(await push());
    await door.close();
    expect([first.status, first.json, second.status, second.json]).toEqual([200, { ok: true }, 200, { ok: true, duplicate: true }]);
    expect(route.calls).toEqual(['SO20240601001']);
    expect(route.stages()).toEqual(['duplicate/info/200']);
  });

  test('the callback threw -> 500 and the lease is given back, so the redelivery is processed', async () => {
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

  // #30.4: a repeat that found a live lease answered 503 at once, though the first delivery
  // finished a moment later: the service recorded a failure for it.
  test.each([
    ['succeeds -> the repeat answers 200 duplicate', 'resolve', [200, { ok: true }], [200, { ok: true, duplicate: true }], [1, 0]],
    [
      'throws -> the repeat runs the callback itself (the lease was given back): 200',
      'reject',
      [500, { error: 'handler failed' }],
      [200, { ok: true }],
      [1, 1],
    ],
  ] as const)('a redelivery while another instance runs the callback, which then %s', async (_label, settle, firstAnswer, repeatAnswer, calls) => {
    const store = createMemoryDedupStore();
    let end!: (how: 'resolve' | 'reject') => void;
    const a = setup(store, () => new Promise<void>((resolve, reject) => (end = (how) => (how === 'resolve' ? resolve() : reject(new Error('database down'))))));
    const b = setup(store);
    const [doorA, doorB] = await Promise.all([open(a.handler), open(b.handler)]);
    const first = doorA.send(await push());
    await vi.waitFor(() => expect(a.calls).toHaveLength(1));
    const during = doorB.send(await push());
    await new Promise((resolve) => setTimeout(resolve, 300));
    end(settle);
    const answers = await Promise.all([first, during]);
    await Promise.all([doorA.close(), doorB.close()]);
    expect(answers.map((r) => [r.status, r.json])).toEqual([firstAnswer, repeatAnswer]);
    expect([a.calls.length, b.calls.length]).toEqual(calls);
  });

  // #30.3: the lease of a callback that never settles was renewed for as long as its process
  // lived: every redelivery, on every instance, got 503.
  // Leases of a few hundred ms renewed by timers: integration tier only (test/helpers/tier.ts).
  test.runIf(FULL)(
    'a callback that never settles -> 500 at callbackTimeoutMs, reported; its lease is no longer renewed, lapses, and a redelivery elsewhere is processed',
    async () => {
      const store = createMemoryDedupStore();
      const a = setup(store, () => new Promise<void>(() => {}), { dedupLeaseMs: 300, dedupTimeoutMs: 100, callbackTimeoutMs: 400 });
      const b = setup(store, undefined, { dedupLeaseMs: 300, dedupTimeoutMs: 100 });
      const [doorA, doorB] = await Promise.all([open(a.handler), open(b.handler)]);
      const first = await doorA.send(await push());
      expect([first.status, first.json]).toEqual([500, { error: 'the handler did not finish in time' }]);
      expect(a.stages()).toEqual(['callback/error/500']);
      const next = await doorB.send(await push()); // waits for the lease to lapse (at most 300 ms)
      await Promise.all([doorA.close(), doorB.close()]);
      expect([next.status, next.json, b.calls.length]).toEqual([200, { ok: true }, 1]);
    },
  );

  test('the instance holding the lease died (no renewals): the redelivery waits for the lease to lapse, then is processed', async () => {
    const store = createMemoryDedupStore();
    store.claim(await dedupKey(PROJECT_BODY), lease('died', 300));
    const b = setup(store, undefined, { dedupLeaseMs: 300, dedupTimeoutMs: 100 });
    const door = await open(b.handler);
    const { status } = await door.send(await push());
    await door.close();
    expect(status).toBe(200);
    expect(b.calls).toHaveLength(1);
  });

  // Leases of a few hundred ms renewed by timers: integration tier only (test/helpers/tier.ts).
  test.runIf(FULL)(
    'a callback that outlives several lease lengths keeps its lease (renewed): the other instance does not run it, and answers 200 duplicate once it succeeds',
    async () => {
      const store = createMemoryDedupStore();
      let finish!: () => void;
      const a = setup(store, () => new Promise<void>((resolve) => (finish = resolve)), { dedupLeaseMs: 500, dedupTimeoutMs: 100 });
      const b = setup(store, undefined, { dedupLeaseMs: 500, dedupTimeoutMs: 100 });
      const [doorA, doorB] = await Promise.all([open(a.handler), open(b.handler)]);
      const first = doorA.send(await push());
      await vi.waitFor(() => expect(a.calls).toHaveLength(1));
      await new Promise((resolve) => setTimeout(resolve, 1000)); // two lease lengths
      const during = doorB.send(await push());
      await new Promise((resolve) => setTimeout(resolve, 1500)); // three more, while B watches
      finish();
      const [outcome, seen] = await Promise.all([first, during]);
      await Promise.all([doorA.close(), doorB.close()]);
      expect([seen.status, seen.json, outcome.status, b.calls.length]).toEqual([200, { ok: true, duplicate: true }, 200, 0]);
      expect(a.stages()).toEqual([]);
    },
  );
});

describe('webhook dedup', () => {
  const request = async () => new Request('http://partner.example/hook', { method: 'POST', ...(await push()) });
  const store = (claim: WebhookDedupStore['claim'], more: Partial<WebhookDedupStore> = {}): WebhookDedupStore => ({
    claim,
    renew: () => true,
    complete: () => {},
    release: () => {},
    ...more,
  });

  test('a store that throws: the push is processed anyway (fail open) and the failure reported', async () => {
    const route = setup(
      store(() => {
        throw new Error('redis down');
      }),
    );
    expect((await route.handler(await request())).status).toBe(200);
    expect(route.calls).toHaveLength(1);
    expect(route.stages()).toEqual(['dedup/warn']);
  });

  test('a store that hangs: processed after dedupTimeoutMs, reported', async () => {
    const route = setup(
      store(() => new Promise(() => {})),
      undefined,
      { dedupTimeoutMs: 30 },
    );
    expect((await route.handler(await request())).status).toBe(200);
    expect(route.calls).toHaveLength(1);
    expect(route.stages()).toEqual(['dedup/warn']);
    expect((route.reported[0][0] as Error).message).toMatch(/did not answer claim within 30 ms/);
  });

  test('a claim that answers something else (a store still returning true) is a store failure: processed, reported', async () => {
    const route = setup(store((() => true) as never));
    expect((await route.handler(await request())).status).toBe(200);
    expect(route.calls).toHaveLength(1);
    expect((route.reported[0][0] as Error).message).toMatch(/claim answered true; expected 'claimed', 'running' or 'done'/);
  });

  test('a release that fails after the callback failed is reported; the answer stays 500', async () => {
    const route = setup(
      store(async () => 'claimed' as const, {
        release: async () => {
          throw new Error('redis down');
        },
      }),
      () => Promise.reject(new Error('database down')),
    );
    expect((await route.handler(await request())).status).toBe(500);
    expect(route.stages()).toEqual(['callback/error/500', 'dedup/warn']);
  });

  test('a complete that fails after success is reported; the answer stays 200 (processed)', async () => {
    const route = setup(
      store(async () => 'claimed' as const, {
        complete: async () => {
          throw new Error('redis down');
        },
      }),
    );
    expect((await route.handler(await request())).status).toBe(200);
    expect(route.stages()).toEqual(['dedup/warn']);
  });

  test('complete comes only after the callback resolved; release only after it threw', async () => {
    const seen: string[] = [];
    const route = setup(
      store(
        async () => {
          seen.push('claim');
          return 'claimed' as const;
        },
        { complete: () => void seen.push('complete'), release: () => void seen.push('release') },
      ),
      () => void seen.push('callback'),
    );
    await route.handler(await request());
    expect(seen).toEqual(['claim', 'callback', 'complete']);
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

  // Once (not through each door): the repeat waits its full 5 s.
  test('a redelivery while another instance runs the callback (not finishing) -> it waits 5 s for the outcome, then 503 with Retry-After, never 200; after success 200 duplicate', async () => {
    const shared = createMemoryDedupStore();
    let finish!: () => void;
    const a = setup(shared, () => new Promise<void>((resolve) => (finish = resolve)), { dedupLeaseMs: 30_000 });
    const b = setup(shared, undefined, { dedupLeaseMs: 30_000 });
    const first = a.handler(await request());
    await vi.waitFor(() => expect(a.calls).toHaveLength(1));
    const during = await b.handler(await request());
    expect([during.status, during.headers.get('retry-after'), await during.json()]).toEqual([
      503,
      '30',
      { error: 'this push is being processed by another delivery; retry later' },
    ]);
    finish();
    expect((await first).status).toBe(200);
    const after = await b.handler(await request());
    expect(await after.json()).toEqual({ ok: true, duplicate: true });
    expect([a.calls.length, b.calls.length]).toEqual([1, 0]);
    expect(b.stages()).toEqual(['duplicate/info/503', 'duplicate/info/200']);
  }, 15_000);

  test('a push delivered to two instances at once: one runs the callback, the other waits for it and answers 200 duplicate', async () => {
    const shared = createMemoryDedupStore();
    const a = setup(shared, () => new Promise((r) => setTimeout(r, 20)));
    const b = setup(shared, () => new Promise((r) => setTimeout(r, 20)));
    const answers = await Promise.all([a.handler(await request()), b.handler(await request())]);
    expect((await Promise.all(answers.map((r) => r.json()))).toSorted((x, y) => Object.keys(x).length - Object.keys(y).length)).toEqual([
      { ok: true },
      { ok: true, duplicate: true },
    ]);
    expect(a.calls.length + b.calls.length).toBe(1);
  });

  test('options: an unknown key or a lease shorter than two dedup timeouts -> ConfigError', () => {
    const base = { secret, dedup: createMemoryDedupStore(), onLogisticsUpdated: () => {} };
    expect(() => createWebhookHandler({ ...base, dedupLease: 5000 } as never)).toThrow(
      /unknown createWebhookHandler option "dedupLease"; did you mean "dedupLeaseMs"\?/,
    );
    expect(() => createWebhookHandler({ ...base, dedupLeaseMs: 1500, dedupTimeoutMs: 1000 })).toThrow(
      /dedupLeaseMs \(1500\) must be at least twice dedupTimeoutMs \(1000\)/,
    );
    expect(() => createWebhookHandler({ ...base, dedupLeaseMs: 0 })).toThrow(/dedupLeaseMs must be a number of milliseconds from 1/);
    expect(() => createWebhookHandler({ ...base, callbackTimeout: 5000 } as never)).toThrow(/did you mean "callbackTimeoutMs"\?/);
    expect(() => createWebhookHandler({ ...base, callbackTimeoutMs: 0 })).toThrow(/callbackTimeoutMs must be a number of milliseconds from 1/);
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
