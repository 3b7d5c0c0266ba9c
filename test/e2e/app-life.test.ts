/**
 * The app's life and the network (issue #45) on the browser entry in real Chromium, built from
 * the package by name as a user's bundler would:
 * - offline through the browser itself (playwright's `context.setOffline`: navigator.onLine and
 *   the online/offline events are the browser's own): nothing sent, the provider not asked, a GET
 *   waits and goes once back online, a write fails at once with NetworkError (`offline: true`);
 *   a page first used offline asks no provider for a token crossTab shared; the retry budget
 *   (100 GETs in an outage: 110 attempts, not 300) over the browser's own fetch;
 * - a real `visibilitychange` (the tab's window minimised and restored over the bare DevTools
 *   protocol: playwright keeps its pages visible): the token that ended while the tab was hidden
 *   is refreshed on show, before any call, and with crossTab one refresh serves every tab.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { launchPipeChromium, type PipeBrowser, type PipeTab } from '../helpers/cdp-pipe.js';
import { hasChromium, listen, openBundledPage, serveBundledPage } from '../helpers/chromium.js';
import { makeJwt } from '../helpers/fake-service.js';

/** The service and the partner's token route on one server, CORS open; it records every call. */
async function startApi() {
  const hits: Array<{ path: string; token?: string }> = [];
  const issued: string[] = [];
  const held: ServerResponse[] = [];
  // Seconds each token lives; ms the service's clock (its Date header, its tokens' iat) runs ahead:
  // the time that passes while a tab is hidden passes for the service too.
  const life = { ttl: 600, skew: 0 };
  const api = await listen((req: IncomingMessage, res: ServerResponse) => {
    const cors = {
      'access-control-allow-origin': '*',
      'access-control-allow-headers': 'authorization, content-type',
      'access-control-expose-headers': 'Date, Retry-After',
    };
    if (req.method === 'OPTIONS') return void res.writeHead(204, cors).end();
    res.setHeader('date', new Date(Date.now() + life.skew).toUTCString());
    const path = req.url ?? '/';
    if (path.startsWith('/token')) {
      const iat = Math.floor((Date.now() + life.skew) / 1000);
      const token = makeJwt({ sub: 'u1', iat, exp: iat + life.ttl, jti: issued.length + 1 });
      issued.push(token);
      return void res.writeHead(200, { 'content-type': 'text/plain', ...cors }).end(token);
    }
    const token = req.headers.authorization?.slice(7);
    hits.push({ path, token });
    // Held until the test lets it go (a call in flight when the network goes).
    if (path.startsWith('/hold')) return void held.push(res.writeHead(200, { 'content-type': 'application/json', ...cors }));
    // An outage: every call answers 503.
    if (path.startsWith('/outage')) return void res.writeHead(503, { 'content-type': 'application/json', ...cors }).end('{"code":503}');
    res.writeHead(200, { 'content-type': 'application/json', ...cors }).end(JSON.stringify({ code: 0, data: { path } }));
  });
  return { ...api, hits, issued, held, life };
}

/**
 * The page: the browser entry's createClient on window, and `make(api, options)`, which builds a
 * client whose tokenProvider asks the token route, whose clock runs `window.skew` ms ahead, and
 * which records its events in `window.seen`.
 */
const pageSource = `
import { createClient } from 'channel-sdk';
window.skew = 0;
window.seen = [];
window.make = (api, options = {}) => {
  const client = createClient({
    baseUrl: api,
    tokenProvider: async () => (await (await fetch(api + '/token')).text()),
    now: () => Date.now() + window.skew,
    retry: { delay: () => 10 },
    ...options,
  });
  for (const type of ['wait', 'app', 'network', 'token', 'token:error', 'retry']) client.on(type, (e) => window.seen.push([type, JSON.stringify(e)]));
  return client;
};
`;

describe.runIf(hasChromium)('the browser entry in Chromium: offline through the browser', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let browser: Awaited<ReturnType<typeof openBundledPage>>;

  beforeAll(async () => {
    api = await startApi();
    browser = await openBundledPage(pageSource, 'make');
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    api?.server.closeAllConnections();
    api?.server.close();
  });

  type Win = Window & {
    make(api: string, o?: object): { get(p: string, o?: object): Promise<unknown>; post(p: string, o?: object): Promise<unknown> };
    skew: number;
    seen: string[][];
    c: ReturnType<Win['make']>;
    b: ReturnType<Win['make']>;
    pending: Promise<unknown>;
  };

  test('offline: a GET waits (nothing sent, no provider call), goes once back online; a POST fails at once with offline: true', async () => {
    const { page, context } = browser;
    await page.evaluate(async (base) => {
      const w = window as unknown as Win;
      w.c = w.make(base);
      await w.c.get('/first');
    }, api.url);
    expect(api.issued).toHaveLength(1);
    await context.setOffline(true);
    const before = api.hits.length;
    // The token ends too: still, nobody is asked offline.
    await page.evaluate(() => {
      const w = window as unknown as Win;
      w.skew = 601_000;
      w.pending = w.c.get('/offline');
    });
    const post = await page.evaluate(async () => {
      const w = window as unknown as Win;
      try {
        await w.c.post('/write', { json: { a: 1 } });
        return 'resolved';
      } catch (e) {
        const error = e as { name: string; offline: boolean; message: string };
        return { name: error.name, offline: error.offline, message: error.message };
      }
    });
    expect(post).toMatchObject({ name: 'NetworkError', offline: true, message: expect.stringContaining('offline') });
    await page.waitForFunction(() => (window as unknown as Win).seen.some(([type]) => type === 'wait'));
    expect(api.hits.length).toBe(before);
    expect(api.issued).toHaveLength(1);
    await context.setOffline(false);
    expect(await page.evaluate(() => (window as unknown as Win).pending)).toEqual({ path: '/offline' });
    // Back online: one provider call for the ended token, then the GET, once.
    expect(api.issued).toHaveLength(2);
    expect(api.hits.filter((h) => h.path === '/offline')).toEqual([{ path: '/offline', token: api.issued[1] }]);
    const seen = await page.evaluate(() => (window as unknown as Win).seen.map(([type, payload]) => type + ' ' + payload));
    expect(seen).toEqual(expect.arrayContaining(['network {"online":false}', 'network {"online":true}']));
  });

  test('a GET in flight when the browser goes offline is sent again once it is back, and resolves', async () => {
    const { page, context } = browser;
    await page.evaluate(() => {
      const w = window as unknown as Win;
      w.skew = 0;
      w.seen.length = 0;
      // The browser does not fail a request in flight when it goes offline: its timeout does.
      w.pending = w.c.get('/hold', { timeout: 500 });
    });
    await expect.poll(() => api.held.length).toBe(1);
    await context.setOffline(true);
    // The attempt times out offline: the client does not retry it, it waits for the network.
    await page.waitForFunction(() => (window as unknown as Win).seen.some(([type]) => type === 'wait'));
    const retries = await page.evaluate(() => (window as unknown as Win).seen.filter(([type]) => type === 'retry').map(([, e]) => JSON.parse(e).reason));
    expect(retries).toEqual(['offline']);
    api.held.splice(0).forEach((res) => res.end(JSON.stringify({ code: 0, data: { path: 'late' } })));
    await context.setOffline(false);
    await expect.poll(() => api.held.length).toBe(1);
    api.held.splice(0).forEach((res) => res.end(JSON.stringify({ code: 0, data: { path: '/hold' } })));
    expect(await page.evaluate(() => (window as unknown as Win).pending)).toEqual({ path: '/hold' });
  });

  test('the retry budget: 100 GETs in an outage cost 110 attempts (not 300); after 50 answers a GET that fails is retried', async () => {
    const { page } = browser;
    const outage = () => api.hits.filter((h) => h.path.startsWith('/outage')).length;
    const failed = await page.evaluate(async (base) => {
      const w = window as unknown as Win;
      w.skew = 0;
      const client = w.make(base);
      await client.get('/before-outage');
      const settled = await Promise.allSettled(Array.from({ length: 100 }, (_, i) => client.get('/outage/' + i)));
      for (let i = 0; i < 50; i++) await client.get('/answer/' + i);
      w.c = client;
      return settled.filter((s) => s.status === 'rejected').length;
    }, api.url);
    expect(failed).toBe(100);
    // The budget's 10 retries, not each call's own 2.
    expect(outage()).toBe(110);
    await page.evaluate(() => (window as unknown as Win).c.get('/outage/after').catch(() => undefined));
    expect(api.hits.filter((h) => h.path === '/outage/after')).toHaveLength(3);
  });

  test('a client first used offline, holding a token another client shared (crossTab) that is due for refresh: the provider is not asked offline', async () => {
    const { page, context } = browser;
    await page.evaluate(async (base) => {
      const w = window as unknown as Win;
      w.skew = 0;
      // b is never used while a gets the token, which crossTab hands to b.
      w.b = w.make(base, { crossTab: { key: 'first-use' } });
      const a = w.make(base, { crossTab: { key: 'first-use' } });
      await a.get('/first-a');
    }, api.url);
    await page.waitForFunction(() => (window as unknown as Win).seen.some(([type, e]) => type === 'token' && e.includes('"shared"')));
    await context.setOffline(true);
    const issued = api.issued.length;
    await page.evaluate(() => {
      const w = window as unknown as Win;
      w.seen.length = 0;
      // Within refreshLeeway (60 s) of the 600-s token's end: the pre-warm would refresh it ahead.
      w.skew = 560_000;
      w.pending = w.b.get('/first-b');
    });
    await page.waitForFunction(() => (window as unknown as Win).seen.some(([type]) => type === 'wait'));
    await new Promise((resolve) => setTimeout(resolve, 200));
    // The tokenProvider's fetch offline fails with "Failed to fetch": token:error, had it been asked.
    expect(await page.evaluate(() => (window as unknown as Win).seen.filter(([type]) => type === 'token:error'))).toEqual([]);
    await context.setOffline(false);
    expect(await page.evaluate(() => (window as unknown as Win).pending)).toEqual({ path: '/first-b' });
    expect(api.hits.filter((h) => h.path === '/first-b')).toHaveLength(1);
    expect(api.issued.length).toBeGreaterThan(issued);
  });

  // Where loopback is the only link (a container run with --network none, a sandboxed CI job),
  // Chromium says navigator.onLine false from the start, with no event, while a service on
  // 127.0.0.1 answers (seen under `unshare -n`). The page here is told the same before it loads.
  test('offline: false: the network is not followed, calls go and resolve as before #45; by default a GET waits and a POST fails', async () => {
    const page = await browser.context.newPage();
    await page.addInitScript(() => Object.defineProperty(Navigator.prototype, 'onLine', { get: () => false }));
    const site = await serveBundledPage(pageSource);
    const before = api.hits.length;
    try {
      await page.goto(site.url);
      await page.waitForFunction(() => typeof (window as unknown as Win).make === 'function');
      const results = await page.evaluate(async (base) => {
        const w = window as unknown as Win;
        const settle = (p: Promise<unknown>) =>
          p.then(
            (v) => v,
            (e: { name: string; offline?: boolean }) => ({ name: e.name, offline: e.offline }),
          );
        const following = w.make(base, { offline: { wait: 200 } });
        const ignoring = w.make(base, { offline: false });
        return {
          onLine: navigator.onLine,
          followingGet: await settle(following.get('/follow')),
          followingPost: await settle(following.post('/follow-write', { json: {} })),
          get: await settle(ignoring.get('/ignore')),
          post: await settle(ignoring.post('/ignore-write', { json: { a: 1 } })),
        };
      }, api.url);
      expect(results).toEqual({
        onLine: false,
        followingGet: { name: 'NetworkError', offline: true },
        followingPost: { name: 'NetworkError', offline: true },
        get: { path: '/ignore' },
        post: { path: '/ignore-write' },
      });
      expect(api.hits.slice(before).map((h) => h.path)).toEqual(['/ignore', '/ignore-write']);
    } finally {
      await page.close();
      site.server.close();
    }
  });
});

describe.runIf(hasChromium)('the browser entry in Chromium: a real visibilitychange', () => {
  let api: Awaited<ReturnType<typeof startApi>>;
  let site: Awaited<ReturnType<typeof listen>>;
  let chromium: PipeBrowser;

  beforeAll(async () => {
    api = await startApi();
    site = await serveBundledPage(pageSource);
    chromium = await launchPipeChromium();
  }, 60_000);

  afterAll(async () => {
    await chromium?.close();
    api?.server.closeAllConnections();
    api?.server.close();
    site?.server.close();
  });

  /**
   * A tab of the page whose client (`window.c`) made its first call; `crossTab`: with { key: 'u1' },
   * and `joins`: a tab opened after another, whose client first takes the token that one holds.
   */
  async function tab(crossTab: boolean, joins = false): Promise<PipeTab> {
    const t = await chromium.open(site.url);
    await until(t, 'typeof window.make === "function"');
    await t.evaluate(`(window.c = window.make(${JSON.stringify(api.url)}, ${crossTab ? "{ crossTab: { key: 'u1' } }" : '{}'}), true)`);
    if (joins) await until(t, 'window.seen.some(([type]) => type === "token")');
    await t.evaluate(`window.c.get('/first').then(() => true)`);
    return t;
  }

  /** Polls `expression` in the tab until it is true. */
  async function until(t: PipeTab, expression: string): Promise<void> {
    for (let i = 0; i < 400; i++) {
      if (await t.evaluate<boolean>(expression)) return;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error('never true in the page: ' + expression);
  }

  test('the token that ended while the tab was hidden is refreshed on the visibilitychange, before any call', async () => {
    api.issued.length = 0;
    Object.assign(api.life, { ttl: 600, skew: 0 });
    const t = await tab(false);
    expect(api.issued).toHaveLength(1);
    await t.setHidden(true);
    await until(t, 'document.visibilityState === "hidden"');
    // 601 s pass while the tab is hidden.
    await t.evaluate('window.skew = 601000');
    api.life.skew = 601_000;
    await t.setHidden(false);
    await until(t, 'document.visibilityState === "visible"');
    // Refreshed on show, with no call made.
    await until(t, 'window.seen.some(([type, e]) => type === "token" && JSON.parse(e).reason === "expired")');
    expect(api.issued).toHaveLength(2);
    const app = await t.evaluate<string[]>('window.seen.filter(([type]) => type === "app").map(([, e]) => e)');
    expect(app).toEqual(['{"visible":false}', '{"visible":true}']);
    const before = api.hits.length;
    await t.evaluate('window.c.get("/after-show").then(() => true)');
    expect(api.issued).toHaveLength(2);
    expect(api.hits.slice(before)).toEqual([{ path: '/after-show', token: api.issued[1] }]);
  });

  test('crossTab with the pre-warm: two tabs shown again make one provider call between them', async () => {
    api.issued.length = 0;
    // Tabs share the device's clock, and refuse an announcement from more than a minute ahead of
    // theirs: the tokens live 50 s, and both clocks move 55 s.
    Object.assign(api.life, { ttl: 50, skew: 0 });
    const [a, b] = [await tab(true), await tab(true, true)];
    // One token for both tabs.
    expect(api.issued).toHaveLength(1);
    await Promise.all([a.setHidden(true), b.setHidden(true)]);
    await until(a, 'document.visibilityState === "hidden"');
    await until(b, 'document.visibilityState === "hidden"');
    await Promise.all([a.evaluate('window.skew = 55000'), b.evaluate('window.skew = 55000')]);
    api.life.skew = 55_000;
    await Promise.all([a.setHidden(false), b.setHidden(false)]);
    await until(a, 'window.seen.some(([type, e]) => type === "token" && JSON.parse(e).version > 1)');
    await until(b, 'window.seen.some(([type, e]) => type === "token" && JSON.parse(e).version > 1)');
    expect(api.issued).toHaveLength(2);
    const reasons = async (t: PipeTab) => t.evaluate<string[]>('window.seen.filter(([type]) => type === "token").map(([, e]) => JSON.parse(e).reason)');
    // One tab asked (the token had ended), the other took its token.
    expect([...(await reasons(a)), ...(await reasons(b))].toSorted()).toEqual(['expired', 'initial', 'shared', 'shared']);
    const before = api.hits.length;
    await Promise.all([a.evaluate('window.c.get("/a").then(() => true)'), b.evaluate('window.c.get("/b").then(() => true)')]);
    expect(api.issued).toHaveLength(2);
    expect(api.hits.slice(before).map((h) => h.token)).toEqual([api.issued[1], api.issued[1]]);
  });
});
