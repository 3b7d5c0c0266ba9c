/**
 * The network half of the app's life (issue #45) in a dedicated worker in real Chromium, the page
 * and the worker bundled from the package by its name. Chromium updates a worker's
 * `navigator.onLine` but fires no `online`/`offline` event on its global scope (seen in the eighth
 * audit: a GET made offline in a worker was sent three times and failed with NetworkError, as
 * before #45): page-signals.ts reads navigator.onLine there on a short poll.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { bundleSource, hasChromium, launchChromium, listen } from '../helpers/chromium.js';
import { answerToken } from '../helpers/fake-service.js';

/** The worker: one client; each message is a path to GET, answered with the outcome and the client's events. */
const workerSource = `
import { createClient } from 'channel-sdk';
const seen = [];
const client = createClient({
  baseUrl: location.origin,
  tokenProvider: async () => (await fetch('/token')).text(),
  offline: { wait: 10000 },
});
for (const type of ['wait', 'network', 'retry']) client.on(type, (e) => seen.push(type + ' ' + (e.until || e.reason || e.online)));
onmessage = async ({ data }) => {
  try {
    postMessage({ value: await client.get(data), seen });
  } catch (e) {
    postMessage({ error: e.name + ': ' + e.message, seen });
  }
};
`;

describe.runIf(hasChromium)('the browser entry in a dedicated worker in Chromium: offline through the browser', () => {
  const hits: string[] = [];
  const tokens: string[] = [];
  let site: Awaited<ReturnType<typeof listen>>;
  let browser: Awaited<ReturnType<typeof launchChromium>>;

  beforeAll(async () => {
    const bundle = await bundleSource(workerSource);
    site = await listen((req: IncomingMessage, res: ServerResponse) => {
      const path = req.url ?? '/';
      if (path === '/worker.js') return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle);
      if (path === '/')
        return void res
          .writeHead(200, { 'content-type': 'text/html' })
          .end(
            '<!doctype html><script>const w = new Worker("/worker.js", { type: "module" }); window.ask = (p) => new Promise((r) => { w.onmessage = (m) => r(m.data); w.postMessage(p); });</script>',
          );
      if (path === '/token') return answerToken(res, tokens);
      if (path === '/favicon.ico') return void res.writeHead(404).end();
      hits.push(path);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ code: 0, data: path }));
    });
    browser = await launchChromium();
    await browser.page.goto(site.url);
    await browser.page.waitForFunction('window.ask');
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    site?.server.closeAllConnections();
    site?.server.close();
  });

  const ask = (path: string) =>
    browser.page.evaluate((p) => (window as unknown as { ask(p: string): Promise<{ value?: unknown; error?: string; seen: string[] }> }).ask(p), path);

  test('a GET made offline in a worker waits (nothing sent), and goes once when the network is back', async () => {
    expect(await ask('/first')).toMatchObject({ value: '/first' });
    await browser.context.setOffline(true);
    // The worker's navigator.onLine is false by now; no event tells it.
    await browser.page.waitForTimeout(600);
    const pending = ask('/offline');
    await browser.page.waitForTimeout(1000);
    expect(hits).toEqual(['/first']);
    await browser.context.setOffline(false);
    const answer = await pending;
    expect(answer).toMatchObject({ value: '/offline' });
    expect(answer.seen).toEqual(expect.arrayContaining(['network false', 'wait online', 'network true']));
    expect(hits).toEqual(['/first', '/offline']);
    expect(tokens).toHaveLength(1);
  });
});
