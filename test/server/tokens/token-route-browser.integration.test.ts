/**
 * The token route as a real Chromium reaches it (#21.5): the headers a browser really sends
 * (Sec-Fetch-Site, Origin, Content-Type) decide. A page on another site (an <img>, a no-cors
 * fetch, a text/plain form POST) is refused and costs no token call; the partner's own page
 * (same origin) and a page of the same site get their token.
 * The route treats every request as the signed-in victim's, whatever it carries: this test is
 * about what the route refuses, not about cookies (SameSite rules would hide some attempts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createTokenExchange, createTokenRoute, toNodeHandler } from '../../../src/server-node.js';
import { startSandbox, type Sandbox } from '../../../src/testing.js';
import { hasChromium, launchChromium, listen } from '../../helpers/chromium.js';

interface Seen {
  method: string;
  url: string;
  site?: string;
  origin?: string;
  type?: string;
  status: number;
}

describe.runIf(hasChromium)('token route in front of a real Chromium', () => {
  let sandbox: Sandbox;
  let partner: Awaited<ReturnType<typeof listen>>;
  let sameSite: Awaited<ReturnType<typeof listen>>;
  let attacker: Awaited<ReturnType<typeof listen>>;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  const seen: Seen[] = [];
  let partnerUrl = '';

  beforeAll(async () => {
    sandbox = await startSandbox();
    const route = toNodeHandler(
      createTokenRoute({ exchange: createTokenExchange({ baseUrl: sandbox.url, ...sandbox.credentials }), resolveUser: () => 'victim', onError: () => {} }),
    );
    partner = await listen((req, res) => {
      if (!req.url?.startsWith('/channel-token')) return void res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>partner</title>');
      res.on('finish', () =>
        seen.push({
          method: req.method ?? '',
          url: req.url ?? '',
          site: req.headers['sec-fetch-site'] as string | undefined,
          origin: req.headers.origin,
          type: req.headers['content-type'],
          status: res.statusCode,
        }),
      );
      route(req, res);
    });
    partnerUrl = partner.url; // http://127.0.0.1:<port>
    const page = (body: string) => (_req: IncomingMessage, res: ServerResponse) =>
      void res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html>' + body);
    sameSite = await listen(page('<title>same site</title>'));
    attacker = await listen(page('<title>attacker</title>'));
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    for (const s of [partner, sameSite, attacker]) {
      s?.server.closeAllConnections();
      s?.server.close();
    }
    await sandbox?.close();
  });

  test('a page on another site: <img>, no-cors fetch GET and text/plain POST, a text/plain form -> all refused, no token call', async () => {
    const calls = sandbox.stats.tokenCalls;
    seen.length = 0;
    // localhost and 127.0.0.1 are different sites to the browser.
    await browser.page.goto(attacker.url.replace('127.0.0.1', 'localhost'));
    await browser.page.evaluate(async (target) => {
      const img = new Image();
      const loaded = new Promise((resolve) => ((img.onerror = resolve), (img.onload = resolve)));
      img.src = target + '/channel-token?force=1&via=img';
      await loaded;
      await fetch(target + '/channel-token?force=1&via=fetch', { mode: 'no-cors', credentials: 'include' });
      await fetch(target + '/channel-token?via=fetch-post', {
        method: 'POST',
        mode: 'no-cors',
        credentials: 'include',
        headers: { 'content-type': 'text/plain' },
        body: '{"forceRefresh":true}',
      });
      // A classic CSRF form: text/plain, whose body reads {"forceRefresh":true,"x":"="}.
      const frame = document.createElement('iframe');
      frame.name = 'sink';
      document.body.append(frame);
      const form = document.createElement('form');
      Object.assign(form, { method: 'POST', enctype: 'text/plain', action: target + '/channel-token?via=form', target: 'sink' });
      const input = document.createElement('input');
      Object.assign(input, { name: '{"forceRefresh":true,"x":"', value: '"}' });
      form.append(input);
      document.body.append(form);
      const posted = new Promise((resolve) => frame.addEventListener('load', resolve, { once: true }));
      form.submit();
      await posted;
    }, partnerUrl);
    await expect.poll(() => seen.length).toBe(4);
    expect(seen.map((s) => [s.url.replace(/^\/channel-token\?/, ''), s.site, s.status])).toEqual([
      ['force=1&via=img', 'cross-site', 403],
      ['force=1&via=fetch', 'cross-site', 403],
      ['via=fetch-post', 'cross-site', 403],
      ['via=form', 'cross-site', 403],
    ]);
    expect(seen.filter((s) => s.method === 'POST').map((s) => s.type?.split(';')[0])).toEqual(['text/plain', 'text/plain']);
    expect(sandbox.stats.tokenCalls - calls).toBe(0);
  });

  test("the partner's own page (same origin): GET ?force=1 and a JSON POST get a token; a page of the same site is served too", async () => {
    seen.length = 0;
    await browser.page.goto(partnerUrl + '/app');
    const answers = await browser.page.evaluate(async () => {
      const get = await fetch('/channel-token?force=1');
      const post = await fetch('/channel-token', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"forceRefresh":true}' });
      return [get.status, (await get.json()).token_type, post.status, (await post.json()).token_type];
    });
    expect(answers).toEqual([200, 'Bearer', 200, 'Bearer']);
    // Another port of the same host: same site, another origin.
    await browser.page.goto(sameSite.url);
    await browser.page.evaluate((target) => fetch(target + '/channel-token?force=1', { mode: 'no-cors' }), partnerUrl);
    await expect.poll(() => seen.length).toBe(3);
    expect(seen.map((s) => [s.method, s.site, s.status])).toEqual([
      ['GET', 'same-origin', 200],
      ['POST', 'same-origin', 200],
      ['GET', 'same-site', 200],
    ]);
  });
});

// #30.9: allowedOrigins let a listed page's requests through, but the route sent no CORS headers
// and answered the preflight 405: the page read 0 of 3 answers while 2 tokens were minted.
describe.runIf(hasChromium)('allowedOrigins, from a page on another site in a real Chromium', () => {
  let sandbox: Sandbox;
  let partner: Awaited<ReturnType<typeof listen>>;
  let shop: Awaited<ReturnType<typeof listen>>;
  let stranger: Awaited<ReturnType<typeof listen>>;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  const seen: Array<[string, string, number]> = [];
  // localhost and 127.0.0.1 are different sites to the browser: the pages are on localhost.
  const onLocalhost = (url: string) => url.replace('127.0.0.1', 'localhost');

  beforeAll(async () => {
    sandbox = await startSandbox();
    const page = (_req: IncomingMessage, res: ServerResponse) =>
      void res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>shop</title>');
    [shop, stranger] = await Promise.all([listen(page), listen(page)]);
    const route = toNodeHandler(
      createTokenRoute({
        exchange: createTokenExchange({ baseUrl: sandbox.url, ...sandbox.credentials }),
        resolveUser: () => 'shopper',
        allowedOrigins: [onLocalhost(shop.url)],
        onError: () => {},
      }),
    );
    partner = await listen((req, res) => {
      res.on('finish', () => seen.push([req.method ?? '', req.url ?? '', res.statusCode]));
      route(req, res);
    });
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    for (const s of [partner, shop, stranger]) {
      s?.server.closeAllConnections();
      s?.server.close();
    }
    await sandbox?.close();
  });

  /** The three calls a client's tokenProvider may make, with credentials, from the page at `url`: what the page could read of each. */
  async function fromPage(url: string) {
    await browser.page.goto(url);
    return browser.page.evaluate(async (target) => {
      const read = async (request: Promise<Response>) => {
        try {
          const response = await request;
          const body = (await response.json()) as { access_token?: string };
          return { status: response.status, token: body.access_token ?? null };
        } catch (error) {
          return { status: 0, token: null, error: (error as Error).name };
        }
      };
      return [
        await read(fetch(target + '/channel-token', { credentials: 'include' })),
        await read(fetch(target + '/channel-token?force=1', { credentials: 'include' })),
        await read(
          fetch(target + '/channel-token', {
            method: 'POST',
            credentials: 'include',
            headers: { 'content-type': 'application/json' },
            body: '{"forceRefresh":true}',
          }),
        ),
      ];
    }, partner.url);
  }

  test('a listed origin reads 3 of 3 answers (GET, GET ?force=1, a JSON POST after its preflight), credentials included; every token minted is one it read', async () => {
    seen.length = 0;
    const calls = sandbox.stats.tokenCalls;
    const answers = await fromPage(onLocalhost(shop.url));
    expect(answers.map((a) => [a.status, a.token ? sandbox.verifyToken(a.token).claims?.sub : a])).toEqual([
      [200, 'shopper'],
      [200, 'shopper'],
      [200, 'shopper'],
    ]);
    expect(seen.map(([method, url, status]) => [method, url.replace('/channel-token', ''), status])).toEqual([
      ['GET', '', 200],
      ['GET', '?force=1', 200],
      ['OPTIONS', '', 204],
      ['POST', '', 200],
    ]);
    expect(sandbox.stats.tokenCalls - calls).toBe(new Set(answers.map((a) => a.token)).size);
  });

  test('a page on an origin not listed reads nothing and mints nothing (its GETs get 403, its preflight 403, so its POST is never sent)', async () => {
    seen.length = 0;
    const calls = sandbox.stats.tokenCalls;
    const answers = await fromPage(onLocalhost(stranger.url));
    expect(answers.map((a) => a.status)).toEqual([0, 0, 0]);
    expect(seen.map(([method, , status]) => [method, status])).toEqual([
      ['GET', 403],
      ['GET', 403],
      ['OPTIONS', 403],
    ]);
    expect(sandbox.stats.tokenCalls - calls).toBe(0);
  });
});
