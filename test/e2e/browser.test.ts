/**
 * The browser entry in a real Chromium page, built from the package by name the way a user's
 * bundler would (esbuild, browser conditions): what happy-dom and Node cannot show.
 * - A 401 whose response lacks CORS headers (a common gateway misconfiguration) reaches the
 *   page as a bare "Failed to fetch": the NetworkError must name CORS, the origin and what to
 *   check, and never the token (#12).
 * - Both kinds of signal cancel an attempt on the wire and the connection is dropped (#11).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { hasChromium, launchChromium, listen, servePackagePage, whyNoChromium } from '../helpers/chromium.js';
import { makeJwt } from '../helpers/fake-service.js';

// Passes on a set-up machine (it launches Chromium), fails under CI=true without it, and is
// skipped with the reason elsewhere: never a silent pass.
test('Chromium is installed and launches', async (context) => {
  if (!hasChromium && process.env.CI !== 'true') context.skip(whyNoChromium);
  expect({ chromium: hasChromium ? 'found' : whyNoChromium }).toEqual({ chromium: 'found' });
  const browser = await launchChromium();
  try {
    expect(browser.context.browser()?.version() ?? (await browser.page.evaluate(() => navigator.userAgent))).toMatch(/\d+\./);
  } finally {
    await browser.close();
  }
});

describe.runIf(hasChromium)('browser entry in Chromium', () => {
  const token = makeJwt({ iat: 1, exp: 2e9, sub: 'chromium-user' });
  let api: Awaited<ReturnType<typeof listen>>;
  let site: Awaited<ReturnType<typeof listen>>;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  const closedEarly: string[] = [];
  const apiHits: string[] = [];

  beforeAll(async () => {
    // The service: CORS on 200 and on preflights, none on its 401 (the misconfiguration), and
    // a route that never answers, to cancel on the wire.
    api = await listen((req, res) => {
      const cors = { 'access-control-allow-origin': '*', 'access-control-allow-headers': 'authorization, content-type' };
      if (req.method === 'OPTIONS') return void res.writeHead(204, cors).end();
      apiHits.push(req.url ?? '');
      if (req.url === '/gateway-401') return void res.writeHead(401, { 'content-type': 'application/json' }).end('{"code":401}');
      if (req.url?.startsWith('/hold')) return void res.on('close', () => closedEarly.push(req.url ?? ''));
      res.writeHead(200, { 'content-type': 'application/json', ...cors }).end('{"code":0,"data":"ok"}');
    });
    site = await servePackagePage(['createClient', 'createCancelToken', 'isChannelError']);
    browser = await launchChromium();
    await browser.page.goto(site.url);
    await browser.page.waitForFunction(() => typeof (window as unknown as { createClient?: unknown }).createClient === 'function');
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    api?.server.closeAllConnections();
    api?.server.close();
    site?.server.close();
  });

  test('a 401 without CORS headers: NetworkError naming CORS, the page origin, the URL and the headers to check; no token', async () => {
    const result = await browser.page.evaluate(
      async ([baseUrl, jwt]) => {
        const w = window as unknown as { createClient: (o: object) => { get(p: string): Promise<unknown> } };
        const client = w.createClient({ baseUrl, tokenProvider: () => jwt, retry: 0 });
        try {
          await client.get('/gateway-401');
          return { resolved: true };
        } catch (e) {
          const error = e as Error & { code: string; url: string };
          return { name: error.name, code: error.code, message: error.message, url: error.url, all: JSON.stringify(error) + String(error.stack) };
        }
      },
      [api.url, token] as const,
    );
    expect(result).toMatchObject({ name: 'NetworkError', code: 'NETWORK_ERROR', url: api.url + '/gateway-401' });
    const message = (result as { message: string }).message;
    expect(message).toContain('Failed to fetch');
    // The probe found the service answering: the browser hid the response (#29 item 9).
    expect(message).toContain('The service answered, but the browser hid the response: CORS');
    expect(message).not.toContain('Nothing answered');
    expect(message).toContain(`origin ${site.url}`);
    expect(message).toContain(`GET ${api.url}/gateway-401`);
    expect(message).toContain(`Access-Control-Allow-Origin: ${site.url} on every response, 401 and 5xx included`);
    expect(message).toContain('Access-Control-Allow-Headers: authorization, content-type');
    expect(message).toContain('Access-Control-Expose-Headers: Retry-After, Date');
    expect((result as { all: string }).all).not.toContain(token);
  });

  test('a wrong port: the NetworkError says nothing answered there at all, not CORS (#29 item 9)', async () => {
    // A port that was just free: nothing listens on it.
    const closed = await listen(() => {});
    await new Promise<void>((resolve) => closed.server.close(() => resolve()));
    const message = await browser.page.evaluate(
      async ([baseUrl, jwt]) => {
        const w = window as unknown as { createClient: (o: object) => { get(p: string): Promise<unknown> } };
        const client = w.createClient({ baseUrl, tokenProvider: () => jwt, retry: 0 });
        return client.get('/x').then(
          () => 'resolved',
          (e: Error) => e.message,
        );
      },
      [closed.url, token] as const,
    );
    expect(message).toContain('Failed to fetch');
    expect(message).toContain(`Nothing answered at ${closed.url} at all`);
    expect(message).toContain('check the host and port of baseUrl');
    expect(message).not.toContain('CORS');
  });

  test('a same-origin network failure does not blame CORS', async () => {
    const message = await browser.page.evaluate(async (jwt) => {
      const w = window as unknown as { createClient: (o: object) => { get(p: string): Promise<unknown> } };
      // The service on the page's own origin, its fetch failing: CORS cannot be the cause.
      const client = w.createClient({
        baseUrl: location.origin,
        tokenProvider: () => jwt,
        retry: 0,
        fetch: () => Promise.reject(new TypeError('Failed to fetch')),
      });
      return client.get('/x').then(
        () => 'resolved',
        (e: Error) => e.message,
      );
    }, token);
    expect(message).toContain('Failed to fetch');
    expect(message).not.toContain('CORS');
  });

  for (const kind of ['AbortController', 'createCancelToken'] as const) {
    test(`${kind} cancels an attempt on the wire: AbortError, and the server sees the connection dropped`, async () => {
      const path = '/hold-' + kind;
      const outcome = await browser.page.evaluate(
        async ([baseUrl, jwt, which, p]) => {
          const w = window as unknown as {
            createClient: (o: object) => { get(p: string, o: object): Promise<unknown> };
            createCancelToken: () => { signal: unknown; cancel(r?: unknown): void };
          };
          const client = w.createClient({ baseUrl, tokenProvider: () => jwt });
          const handle = which === 'AbortController' ? new AbortController() : w.createCancelToken();
          const pending = client.get(p, { signal: handle.signal });
          await new Promise((r) => setTimeout(r, 300));
          (handle as { abort?: (r?: unknown) => void; cancel?: (r?: unknown) => void })[which === 'AbortController' ? 'abort' : 'cancel']!('left the page');
          return pending.then(
            () => 'resolved',
            (e: Error & { code: string }) => e.code,
          );
        },
        [api.url, token, kind, path] as const,
      );
      expect(outcome).toBe('ABORTED');
      await expect.poll(() => closedEarly).toContain(path);
    });
  }
});
