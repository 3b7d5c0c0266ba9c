/**
 * crossTab in Chromium (issue #15): several tabs of one origin, each with its own client,
 * against a service that rotates tokens (each new token revokes the older ones: what a
 * partner may build on top of the service) and a partner backend whose token route the tabs'
 * tokenProvider calls over HTTP.
 */
import type { ServerResponse } from 'node:http';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { hasChromium, launchChromium, listen, servePackagePage } from '../helpers/chromium.js';
import { startFakeService, type FakeService } from '../helpers/fake-service.js';

interface Outcome {
  ok: number;
  failed: string[];
}

/** What a tab's page holds: its client, and every message its client's channel handled, in order. */
interface TabWindow {
  client: { get(p: string): Promise<unknown>; getToken(o?: object): Promise<string>; clearToken(): void };
  heard: unknown[];
}

describe.runIf(hasChromium)('crossTab: tabs share one token', () => {
  let service: FakeService;
  let backend: Awaited<ReturnType<typeof listen>>;
  let site: Awaited<ReturnType<typeof listen>>;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  /** Token-route calls: which tab asked, forced or not. */
  let routeCalls: Array<{ tab: string; user: string; force: boolean }> = [];
  /** Tabs whose token-route call hangs (the holder that dies mid-refresh). */
  const hang = new Set<string>();
  /** Waiters for a number of token-route calls. */
  let routeWaiters: Array<() => void> = [];
  /** Resolves once the token route has been called `n` times (in this test). */
  const routeCalled = (n: number) =>
    new Promise<void>((resolve) => {
      const check = () => (routeCalls.length >= n ? (resolve(), true) : false);
      if (!check()) routeWaiters.push(() => void check());
    });
  /**
   * A gate a tab can block on: `/gate` is a synchronous XHR the backend answers only when
   * `open()` is called, so the tab's main thread is inside one long task until then.
   * `entered` resolves when the tab is in it.
   */
  let gate = { entered: Promise.resolve(), open: () => {} };
  let onGate = (_res: ServerResponse) => {};
  const newGate = () => {
    let opened = false;
    let held: ServerResponse | undefined;
    let entered = () => {};
    gate = {
      entered: new Promise<void>((resolve) => (entered = resolve)),
      open: () => {
        opened = true;
        held?.end('go');
      },
    };
    onGate = (res) => {
      held = res;
      entered();
      if (opened) res.end('go');
    };
  };

  beforeAll(async () => {
    service = await startFakeService({ strictRotation: true });
    backend = await listen((req, res) => {
      const url = new URL(req.url ?? '/', 'http://backend');
      res.setHeader('access-control-allow-origin', '*');
      if (url.pathname === '/gate') return onGate(res);
      const tab = url.searchParams.get('tab') ?? '?';
      const user = url.searchParams.get('user') ?? 'user-1';
      routeCalls.push({ tab, user, force: url.searchParams.get('force') === '1' });
      for (const wake of routeWaiters.splice(0)) wake();
      if (hang.has(tab)) return; // never answers
      // The token exchange takes a while, as a real one does.
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: service.issue(user) })), 80);
    });
    site = await servePackagePage(['createClient']);
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await service?.close();
    backend?.server.closeAllConnections();
    backend?.server.close();
    site?.server.close();
  });

  beforeEach(async () => {
    routeCalls = [];
    routeWaiters = [];
    hang.clear();
    for (const page of browser.context.pages()) await page.close();
  });

  /**
   * Opens a tab whose client is window.client: crossTab under `key` (or none), its provider
   * calling the backend as `tab`. With crossTab, window.heard lists every message the client's
   * channel handled, in order: a listener added after the client's own runs after it, so a
   * message in `heard` has been handled by the client (see `heard` below).
   */
  async function openTab(tab: string, key: string | undefined, tokenTimeout = 10_000, without: string[] = []): Promise<Page> {
    const page = await browser.context.newPage();
    await page.goto(site.url);
    await page.waitForFunction(() => typeof (window as unknown as { createClient?: unknown }).createClient === 'function');
    await page.evaluate(
      async ([serviceUrl, backendUrl, name, k, timeout, missing]) => {
        const w = window as unknown as { createClient(o: object): unknown; client: unknown; heard: unknown[] };
        // An older browser of the supported range: these static methods of AbortSignal are missing.
        for (const method of missing) Reflect.deleteProperty(AbortSignal, method);
        const channels: BroadcastChannel[] = [];
        const Native = BroadcastChannel;
        window.BroadcastChannel = class extends Native {
          constructor(channelName: string) {
            super(channelName);
            channels.push(this);
          }
        };
        w.heard = [];
        w.client = w.createClient({
          baseUrl: serviceUrl,
          tokenTimeout: timeout,
          ...(k ? { crossTab: { key: k } } : {}),
          tokenProvider: async ({ forceRefresh }: { forceRefresh: boolean }) => {
            const r = await fetch(`${backendUrl}/token?tab=${name}&user=${k ?? 'user-1'}${forceRefresh ? '&force=1' : ''}`);
            return (await r.json()).access_token;
          },
        });
        if (!k) return;
        // The crossTab chunk loads and opens its channel (setting its onmessage) right after createClient.
        while (!channels.length) await new Promise((resolve) => setTimeout(resolve, 5));
        channels[0].addEventListener('message', (event) => w.heard.push(event.data));
      },
      [service.url, backend.url, tab, key, tokenTimeout, without] as const,
    );
    return page;
  }

  /** Resolves once the client in `page` has handled a channel message with these `fields`. */
  const heard = (page: Page, fields: Record<string, unknown>) =>
    page.waitForFunction(
      (want) =>
        (window as unknown as TabWindow).heard.some(
          (m) => !!m && typeof m === 'object' && Object.entries(want).every(([name, value]) => (m as Record<string, unknown>)[name] === value),
        ),
      fields,
    );

  /** `n` GETs at once in the tab; resolves to how many succeeded and the codes of the failures. */
  const burst = (page: Page, n: number, path = '/x') =>
    page.evaluate(
      async ([count, p]) => {
        const client = (window as unknown as { client: { get(p: string): Promise<unknown> } }).client;
        const results = await Promise.allSettled(Array.from({ length: count }, (_, i) => client.get(p + '/' + i)));
        return {
          ok: results.filter((r) => r.status === 'fulfilled').length,
          failed: results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => String((r.reason as { code?: string }).code)),
        };
      },
      [n, path] as const,
    ) as Promise<Outcome>;

  test('3 tabs x 20 requests at once against a rotating backend: 1 provider call, 60/60 ok', async () => {
    const tabs = [await openTab('A', 'user-1'), await openTab('B', 'user-1'), await openTab('C', 'user-1')];
    const outcomes = await Promise.all(tabs.map((page) => burst(page, 20)));
    expect(outcomes).toEqual([
      { ok: 20, failed: [] },
      { ok: 20, failed: [] },
      { ok: 20, failed: [] },
    ]);
    expect(routeCalls).toHaveLength(1);
  });

  test('a 401 in one tab: one forced refresh for all of them, the others take the new token', async () => {
    const tabs = [await openTab('A', 'user-1'), await openTab('B', 'user-1'), await openTab('C', 'user-1')];
    await Promise.all(tabs.map((page) => burst(page, 2)));
    expect(routeCalls).toHaveLength(1);
    service.expireAll();
    const outcomes = await Promise.all(tabs.map((page) => burst(page, 10)));
    expect(outcomes.map((o) => o.ok)).toEqual([10, 10, 10]);
    expect(routeCalls.filter((c) => c.force)).toHaveLength(1);
    expect(routeCalls).toHaveLength(2);
  });

  test('without crossTab the same burst makes a provider call per tab and the tabs revoke each other (the problem)', async () => {
    const tabs = [await openTab('A', undefined), await openTab('B', undefined), await openTab('C', undefined)];
    const outcomes = await Promise.all(tabs.map((page) => burst(page, 20)));
    expect(routeCalls.length).toBeGreaterThanOrEqual(3);
    // Each rotation revokes the others' tokens: some replays fail or need more refreshes.
    expect(outcomes.reduce((n, o) => n + o.failed.length, 0) + routeCalls.length).toBeGreaterThan(3);
  });

  test('the lock holder closed mid-refresh: another tab completes within tokenTimeout', async () => {
    hang.add('A');
    const holder = await openTab('A', 'user-1');
    const waiter = await openTab('B', 'user-1');
    void holder
      .evaluate(() => (window as unknown as { client: { get(p: string): Promise<unknown> } }).client.get('/stuck').catch(() => 'failed'))
      .catch(() => 'tab closed');
    await routeCalled(1);
    expect(routeCalls.map((c) => c.tab)).toEqual(['A']);
    const pending = burst(waiter, 5);
    // B waits for the lock A holds (well within its tokenTimeout), then A's tab closes.
    await waiter.evaluate(async () => {
      while (!((await navigator.locks.query()).pending ?? []).length) await new Promise((resolve) => setTimeout(resolve, 10));
    });
    await holder.close();
    expect(await pending).toEqual({ ok: 5, failed: [] });
    expect(routeCalls.map((c) => c.tab)).toEqual(['A', 'B']);
  });

  test('a tab that hangs mid-refresh (open, lock held) does not wedge another: it goes alone after tokenTimeout', async () => {
    hang.add('A');
    const holder = await openTab('A', 'user-1', 1500);
    const waiter = await openTab('B', 'user-1', 1500);
    void holder
      .evaluate(() => (window as unknown as { client: { get(p: string): Promise<unknown> } }).client.get('/stuck').catch(() => 'failed'))
      .catch(() => 'tab closed');
    await routeCalled(1);
    expect(await burst(waiter, 3)).toEqual({ ok: 3, failed: [] });
    expect(routeCalls.map((c) => c.tab)).toEqual(['A', 'B']);
  });

  test('different keys never share: two users in two tabs each get their own token', async () => {
    const alice = await openTab('A', 'alice');
    const bob = await openTab('B', 'bob');
    await burst(alice, 3);
    await burst(bob, 3);
    expect(routeCalls.map((c) => c.user).toSorted()).toEqual(['alice', 'bob']);
    const tokens = async (page: Page) => page.evaluate(() => (window as unknown as { client: { getToken(): Promise<string> } }).client.getToken());
    expect(await tokens(alice)).not.toBe(await tokens(bob));
  });

  /** Tokens a tab's requests to `path` carried. */
  const sentTo = (path: string) => service.hits.filter((h) => h.path.startsWith(path)).map((h) => h.token);

  test('a token announced while this tab runs clearToken() is never taken after the clear, here or in a tab opened later (#20 item 3)', async () => {
    const a = await openTab('A', 'user-1');
    const b = await openTab('B', 'user-1');
    await burst(a, 1, '/a-before');
    const beforeClear = new Set(service.issued);
    // Tab A is inside a long task (blocked on the gate) while B announces its new token; the
    // clear runs at the end of that task, so A handles B's announcement after its own clear.
    newGate();
    const busy = a.evaluate((url) => {
      const request = new XMLHttpRequest();
      request.open('GET', url, false);
      request.send();
      (window as unknown as TabWindow).client.clearToken();
    }, backend.url + '/gate');
    await gate.entered;
    const announced = await b.evaluate(() => (window as unknown as TabWindow).client.getToken({ forceRefresh: true }));
    service.issued.forEach((token) => beforeClear.add(token));
    gate.open();
    await busy;
    // A has handled B's announcement (after its clear); then use A, then open a tab after the logout.
    await heard(a, { t: 'token', token: announced });
    await burst(a, 1, '/a-after');
    const later = await openTab('D', 'user-1');
    await burst(later, 1, '/d-later');
    await burst(b, 1, '/b-after');
    const sentBeforeClear = (who: string) => sentTo('/' + who).filter((token) => token && beforeClear.has(token)).length;
    expect({ a: sentBeforeClear('a-after'), later: sentBeforeClear('d-later'), b: sentBeforeClear('b-after') }).toEqual({ a: 0, later: 0, b: 0 });
  });

  test('forged channel messages: a non-JWT is never sent, junk never wedges a tab, a tab opened later still works (#20 item 4)', async () => {
    const a = await openTab('A', 'victim');
    expect(await burst(a, 1, '/forged/a0')).toEqual({ ok: 1, failed: [] });
    const forgedJwt = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"sub":"attacker","iat":1,"exp":9999999999}').toString('base64url')}.x`;
    /**
     * Any script of the origin can post on the channel (under the name of this release and of
     * the last). Resolves once A's client has handled them all: the last is a marker.
     */
    let forged = 0;
    const forge = async (messages: unknown[]) => {
      const marker = { t: 'marker', n: ++forged };
      await a.evaluate(
        ([base, list]) => {
          const w = window as unknown as { forged?: BroadcastChannel[] };
          w.forged ??= ['channel-sdk/2 ' + base + ' victim', 'channel-sdk ' + base + ' victim'].map((name) => new BroadcastChannel(name));
          // Kept open: Chromium drops what a channel closed at once had posted.
          // oxlint-disable-next-line unicorn/require-post-message-target-origin -- BroadcastChannel.postMessage takes no target origin
          for (const channel of w.forged) for (const message of list) channel.postMessage(message);
        },
        [service.url, [...messages, marker]] as const,
      );
      await heard(a, marker);
    };
    await forge([{ t: 'token', token: 'attacker-session-id', at: Date.now(), id: 'evil', g: 0 }]);
    const outcomes = [await burst(a, 1, '/forged/a1')];
    await forge([
      { t: 'token', token: 12345, at: 1e15, id: 'evil', g: 0 },
      { t: 'token', token: forgedJwt, at: Date.now() + 1e9, id: 'evil', g: 0 },
      { t: 'token', token: forgedJwt, at: null, id: 'evil', g: 0 },
      { t: 'token', token: 'Bearer ' + forgedJwt, at: Date.now(), id: 'evil', g: 0 },
      { t: 'token', token: [forgedJwt], at: Date.now(), id: 'evil', g: 0 },
      { t: 'state', g: -1, id: 'evil' },
      { t: 'busy', id: 5 },
      null,
      'token',
      42,
      [],
    ]);
    // A tab opened now asks the others for their token.
    const later = await openTab('C', 'victim');
    outcomes.push(await burst(later, 3, '/forged/c1'), await burst(later, 3, '/forged/c2'));
    await forge([{ t: 'clear', g: 'x' }, { t: 'clear' }, { t: 'hello' }]);
    outcomes.push(await burst(a, 3, '/forged/a2'));
    const sent = new Set(sentTo('/forged'));
    expect({
      outcomes,
      forgedSent: ['attacker-session-id', forgedJwt].filter((token) => sent.has(token)),
      notIssued: [...sent].filter((token) => token === undefined || !service.issued.includes(token)).length,
    }).toEqual({
      outcomes: [
        { ok: 1, failed: [] },
        { ok: 3, failed: [] },
        { ok: 3, failed: [] },
        { ok: 3, failed: [] },
      ],
      forgedSent: [],
      notIssued: 0,
    });
  });

  test('logout in one tab clears the others: their next request asks the provider, nothing of the old session is sent', async () => {
    const a = await openTab('A', 'user-1');
    const b = await openTab('B', 'user-1');
    await burst(a, 2);
    await burst(b, 2);
    expect(routeCalls).toHaveLength(1);
    const before = service.hits.length;
    await a.evaluate(() => (window as unknown as TabWindow).client.clearToken());
    // The clear reaches tab B over BroadcastChannel; B's next call must not use the cleared token.
    await heard(b, { t: 'clear' });
    await b.evaluate(() => (window as unknown as TabWindow).client.getToken());
    expect(routeCalls).toHaveLength(2);
    expect(await burst(b, 2)).toEqual({ ok: 2, failed: [] });
    const oldToken = service.issued[0];
    expect(service.hits.slice(before).filter((h) => h.token === oldToken)).toEqual([]);
  });

  /** clearToken() in `page`, then one GET of the next session: how long that GET took, in ms. */
  const logoutThenGet = (page: Page, path: string) =>
    page.evaluate(async (p) => {
      const client = (window as unknown as TabWindow).client;
      client.clearToken();
      const started = performance.now();
      await client.get(p);
      return performance.now() - started;
    }, path);

  test('a logout while a refresh of the old session hangs (in another tab, or in this one): the next session does not wait for it', async () => {
    const a = await openTab('A', 'user-1', 4000);
    const b = await openTab('B', 'user-1', 4000);
    expect(await burst(a, 1)).toEqual({ ok: 1, failed: [] });
    // B holds the lock in a refresh whose provider never answers (bounded by tokenTimeout: 4 s).
    hang.add('B');
    const bRefresh = b.evaluate(() => (window as unknown as TabWindow).client.getToken({ forceRefresh: true }).then(String, (e) => String(e.code)));
    await routeCalled(2);
    const afterOther = await logoutThenGet(a, '/next/a');
    // Now A itself holds the lock in a hung refresh when it logs out.
    hang.add('A');
    const aRefresh = a.evaluate(() => (window as unknown as TabWindow).client.getToken({ forceRefresh: true }).then(String, (e) => String(e.code)));
    await routeCalled(4);
    hang.delete('A');
    const afterOwn = await logoutThenGet(a, '/next/a2');
    expect({ afterOther: afterOther < 2000, afterOwn: afterOwn < 2000 }).toEqual({ afterOther: true, afterOwn: true });
    expect([await bRefresh, await aRefresh]).toEqual(['ABORTED', 'ABORTED']);
    // The hung calls asked for the old sessions; nothing of them was sent.
    expect(routeCalls.map((c) => c.tab)).toEqual(['A', 'B', 'A', 'A', 'A']);
  });

  test('on a supported browser without AbortSignal.timeout (Chrome 93-102, Firefox 96-99, Safari 15.4-15.6) tabs share as elsewhere, and a hung holder is still waited for at most tokenTimeout', async () => {
    const a = await openTab('A', 'user-1', 1500, ['timeout']);
    const b = await openTab('B', 'user-1', 1500, ['timeout']);
    const outcomes = [await burst(a, 3), await burst(b, 3)];
    expect({ outcomes, calls: routeCalls.length }).toEqual({
      outcomes: [
        { ok: 3, failed: [] },
        { ok: 3, failed: [] },
      ],
      calls: 1,
    });
    hang.add('A');
    void a.evaluate(() => (window as unknown as TabWindow).client.getToken({ forceRefresh: true }).catch(() => 'failed')).catch(() => 'closed');
    await routeCalled(2);
    expect(
      await b.evaluate(() =>
        (window as unknown as TabWindow).client.getToken({ forceRefresh: true }).then(
          () => 'ok',
          (e) => String(e.code),
        ),
      ),
    ).toBe('ok');
    expect(routeCalls.map((c) => c.tab)).toEqual(['A', 'A', 'B']);
  });
});
