/**
 * The Page Lifecycle in real Chromium (issue #45): a page kept in the back/forward cache while the
 * network goes. On restore Chromium runs `resume` and `visibilitychange` (visible) first and
 * delivers the `offline` event only after `pageshow`: the show's pre-warm must already know the
 * page is offline. Playwright turns the cache off (`--disable-back-forward-cache`); here it is on.
 */
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { bundleSource, chromiumFlags, executablePath, hasChromium, listen } from '../helpers/chromium.js';
import { answerToken } from '../helpers/fake-service.js';

const pageSource = `
import { createClient } from 'channel-sdk';
window.skew = 0;
window.seen = [];
addEventListener('pageshow', (e) => window.seen.push(['pageshow', String(e.persisted)]));
window.c = createClient({
  baseUrl: location.origin,
  tokenProvider: async () => (await (await fetch('/token')).text()),
  now: () => Date.now() + window.skew,
});
for (const type of ['wait', 'token', 'token:error']) window.c.on(type, (e) => window.seen.push([type, JSON.stringify(e)]));
`;

describe.runIf(hasChromium)('the Page Lifecycle in Chromium: the back/forward cache', () => {
  const tokens: string[] = [];
  const hits: string[] = [];
  let site: Awaited<ReturnType<typeof listen>>;
  let browser: Awaited<ReturnType<typeof chromium.launch>>;

  beforeAll(async () => {
    const bundle = await bundleSource(pageSource);
    site = await listen((req, res) => {
      const path = req.url ?? '/';
      if (path === '/bundle.js') return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle);
      if (path === '/a') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><script type="module" src="/bundle.js"></script>');
      if (path === '/b') return void res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><body>another page</body>');
      if (path === '/token') return answerToken(res, tokens);
      if (path === '/favicon.ico') return void res.writeHead(404).end();
      hits.push(path);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"code":0,"data":1}');
    });
    browser = await chromium.launch({ executablePath, headless: true, args: chromiumFlags, ignoreDefaultArgs: ['--disable-back-forward-cache'] });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    site?.server.closeAllConnections();
    site?.server.close();
  });

  test('restored offline with its token ended: no provider call on show, a GET waits and goes once online with a new token', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(site.url + '/a');
    await page.waitForFunction('window.c');
    await page.evaluate('window.c.get("/first")');
    expect(tokens).toHaveLength(1);
    // The token ends while the page sits in the cache, and the network goes.
    await page.evaluate('window.skew = 601000');
    await page.goto(site.url + '/b');
    await context.setOffline(true);
    await page.goBack({ waitUntil: 'commit' });
    await page.waitForFunction('window.seen.some(([type, persisted]) => type === "pageshow" && persisted === "true")');
    await page.evaluate('void (window.pending = window.c.get("/after"))');
    await page.waitForFunction('window.seen.some(([type]) => type === "wait")');
    const seen = await page.evaluate<string[][]>('window.seen');
    expect(seen.filter(([type]) => type === 'token:error')).toEqual([]);
    expect(tokens).toHaveLength(1);
    expect(hits).toEqual(['/first']);
    await context.setOffline(false);
    await page.evaluate('window.pending');
    expect(tokens).toHaveLength(2);
    expect(hits).toEqual(['/first', '/after']);
    await context.close();
  });
});
