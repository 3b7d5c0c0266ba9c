/**
 * Bodies that arrive after their call resolved (#42 items 1 and 5), in a real Chromium page built
 * from the package by name: a stream of server-sent events through client.fetch and a raw
 * download. clearToken() and a new tokenStore key() must stop them (no event of the signed-out
 * user after the fence, the connection dropped), and so must the caller's signal, also in a
 * browser that lacks AbortSignal.any (deleted before the bundle loads: Chrome < 116, Safari < 17.4,
 * Firefox < 124, which the README supports), and in one that lacks AbortSignal's throwIfAborted
 * as well (Chrome 93-99, Firefox 92-96).
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { hasChromium, launchChromium, listen, servePackagePage } from '../helpers/chromium.js';
import { makeJwt } from '../helpers/fake-service.js';

/** What the page saw: events before the stop, events after it (within 220 ms), and how the read ended. */
interface Seen {
  before: number;
  after: number;
  ended: { name: string; code?: string; message: string } | 'done' | 'still streaming';
}

describe.runIf(hasChromium)('bodies still arriving, in Chromium', () => {
  const token = makeJwt({ iat: 1, exp: 2e9, sub: 'alice' });
  // Every /events connection by its id, and whether the server saw it closed before it ended.
  const streams = new Map<string, { closedEarly: boolean }>();
  let api: Awaited<ReturnType<typeof listen>>;
  let site: Awaited<ReturnType<typeof listen>>;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  let withAny: Page;
  let withoutAny: Page;
  let withoutThrowIfAborted: Page;

  beforeAll(async () => {
    // An event every 20 ms for 20 s (server-sent events, or a large download).
    api = await listen((req, res) => {
      const cors = { 'access-control-allow-origin': '*', 'access-control-allow-headers': 'authorization, content-type, accept' };
      if (req.method === 'OPTIONS') return void res.writeHead(204, cors).end();
      const id = new URL(req.url ?? '/', 'http://x').searchParams.get('id') ?? '';
      const state = { closedEarly: false };
      streams.set(id, state);
      res.writeHead(200, { ...cors, 'content-type': 'text/event-stream' });
      let n = 0;
      const timer = setInterval(() => (++n > 1000 ? (clearInterval(timer), res.end()) : res.write('data: ' + n + '\n\n')), 20);
      res.on('close', () => {
        clearInterval(timer);
        state.closedEarly = !res.writableEnded;
      });
    });
    site = await servePackagePage(['createClient']);
    browser = await launchChromium();
    withAny = browser.page;
    withoutAny = await browser.context.newPage();
    // Before any script of the page: the bundle loads into a browser without AbortSignal.any.
    await withoutAny.addInitScript(() => void Reflect.deleteProperty(AbortSignal, 'any'));
    // Older still, in the supported range: no throwIfAborted either (Chrome 93-99, Firefox 92-96).
    withoutThrowIfAborted = await browser.context.newPage();
    await withoutThrowIfAborted.addInitScript(
      () => void (Reflect.deleteProperty(AbortSignal, 'any'), Reflect.deleteProperty(AbortSignal.prototype, 'throwIfAborted')),
    );
    for (const page of [withAny, withoutAny, withoutThrowIfAborted]) {
      await page.goto(site.url);
      await page.waitForFunction(() => typeof (window as unknown as { createClient?: unknown }).createClient === 'function');
    }
  }, 60_000);

  test('the second page runs without AbortSignal.any, the first with it', async () => {
    expect([await withAny.evaluate(() => typeof AbortSignal.any), await withoutAny.evaluate(() => typeof AbortSignal.any)]).toEqual(['function', 'undefined']);
  });

  afterAll(async () => {
    await browser?.close();
    for (const open of [api, site]) open?.server.close().closeAllConnections();
  });

  /** In `page`: a client, one stream opened by `call` and read a little, stopped by `stop`, then read for 220 ms more. */
  function run(page: Page, id: string, call: 'fetch' | 'download', stop: 'clearToken' | 'user switch' | 'signal'): Promise<Seen> {
    return page.evaluate(
      async ([baseUrl, jwt, streamId, how, by]) => {
        type Client = {
          fetch(path: string, init?: object): Promise<Response>;
          download(path: string, options: object): Promise<Response>;
          clearToken(): void;
        };
        const w = window as unknown as { createClient: (o: object) => Client };
        const store = { user: 'alice' };
        const client = w.createClient({
          baseUrl,
          tokenProvider: () => jwt,
          tokenStore: { get: () => null, set() {}, remove() {}, key: () => store.user },
        });
        const controller = new AbortController();
        const path = '/events?id=' + streamId;
        const response = how === 'fetch' ? await client.fetch(path, { signal: controller.signal }) : await client.download(path, { raw: true });
        const reader = (response.body as ReadableStream<Uint8Array>).getReader();
        const decoder = new TextDecoder();
        const count = async (ms: number) => {
          let events = 0;
          const until = performance.now() + ms;
          try {
            while (performance.now() < until) {
              const { done, value } = await reader.read();
              if (done) return { events, ended: 'done' as const };
              events += decoder.decode(value).split('data:').length - 1;
            }
            return { events, ended: 'still streaming' as const };
          } catch (e) {
            const error = e as Error & { code?: string };
            return { events, ended: { name: error.name, code: error.code, message: error.message } };
          }
        };
        const before = await count(100);
        if (by === 'clearToken') client.clearToken();
        else if (by === 'signal') controller.abort(new DOMException('left the page', 'AbortError'));
        else {
          // Bob signs in; his first call notices the new key and fences Alice's.
          store.user = 'bob';
          await client.fetch('/events?id=' + streamId + '-bob').then((r) => r.body && r.body.cancel());
        }
        const after = await count(220);
        return { before: before.events, after: after.events, ended: after.ended };
      },
      [api.url, token, id, call, stop] as const,
    );
  }

  const pages = {
    'Chromium with AbortSignal.any': () => withAny,
    'AbortSignal.any deleted before the bundle loads': () => withoutAny,
    'AbortSignal.any and throwIfAborted deleted (Chrome 93-99)': () => withoutThrowIfAborted,
  };
  for (const [name, page] of Object.entries(pages)) {
    describe(`${name}`, () => {
      for (const [call, stop] of [
        ['fetch', 'clearToken'],
        ['fetch', 'user switch'],
        ['download', 'clearToken'],
        ['download', 'user switch'],
      ] as const) {
        test(`item 1: ${stop === 'clearToken' ? 'clearToken()' : 'a new tokenStore key()'} after ${call === 'fetch' ? 'client.fetch' : 'download({ raw: true })'} resolved: no event after it, the connection dropped`, async () => {
          const id = [name.length, call, stop].join('-').replace(/ /g, '');
          const seen = await run(page(), id, call, stop);
          expect(seen.before).toBeGreaterThan(0);
          expect({ after: seen.after, ended: seen.ended }).toEqual({
            after: 0,
            ended: { name: 'AbortError', code: 'ABORTED', message: expect.stringMatching(/clearToken\(\) ran/) },
          });
          await expect.poll(() => streams.get(id)?.closedEarly).toBe(true);
        });
      }

      test('item 2 through the body: a call given the signal of a client.fetch whose body clearToken() stopped (a stack retrying the failed read) is refused unsent', async () => {
        const id = [name.length, 'again'].join('-');
        const outcome = await page().evaluate(
          async ([baseUrl, jwt, streamId]) => {
            type Client = { fetch(path: string, init?: object): Promise<Response>; clearToken(): void };
            const client = (window as unknown as { createClient: (o: object) => Client }).createClient({ baseUrl, tokenProvider: () => jwt });
            const { signal } = new AbortController();
            const response = await client.fetch('/events?id=' + streamId, { signal });
            const reading = response.text().catch((e: Error & { code?: string }) => e.code);
            await new Promise((resolve) => setTimeout(resolve, 100));
            client.clearToken();
            const read = await reading;
            const again = await client.fetch('/events?id=' + streamId + '-again', { signal }).then(
              (r) => (r.body?.cancel(), 'sent: ' + r.status),
              (e: Error & { code?: string }) => e.code,
            );
            return { read, again };
          },
          [api.url, token, id] as const,
        );
        expect(outcome).toEqual({ read: 'ABORTED', again: 'ABORTED' });
        expect(streams.has(id + '-again')).toBe(false);
      });

      test('item 5: the caller’s signal after client.fetch resolved: no event after it, the read fails with its reason, the connection dropped', async () => {
        const id = [name.length, 'signal'].join('-');
        const seen = await run(page(), id, 'fetch', 'signal');
        expect(seen.before).toBeGreaterThan(0);
        expect({ after: seen.after, ended: seen.ended }).toEqual({
          after: 0,
          ended: expect.objectContaining({ name: 'AbortError', message: 'left the page' }),
        });
        await expect.poll(() => streams.get(id)?.closedEarly).toBe(true);
      });
    });
  }
});
