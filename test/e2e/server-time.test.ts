/**
 * Issue #20 item 6 in Chromium: a page reads the service's `Date` header across origins only
 * when the service sends `Access-Control-Expose-Headers: Date`. With it, a token the backend
 * served from its cache (issued 880 s of 900 before) is refreshed ahead of its real end after
 * the first answer; without it the client times the token from receipt, as before. The
 * sandbox sends the header; its clock (`now`) is moved on here so that its token is old.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/testing.js';
import { hasChromium, launchChromium, servePackagePage } from '../helpers/chromium.js';
import { startFakeService, type FakeService } from '../helpers/fake-service.js';

describe.runIf(hasChromium)('the service clock from the Date header, across origins in Chromium', () => {
  let site: Awaited<ReturnType<typeof servePackagePage>>;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  const services: FakeService[] = [];
  let sandbox: Sandbox | undefined;

  beforeAll(async () => {
    site = await servePackagePage(['createClient']);
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    site?.server.close();
    await Promise.all(services.map((s) => s.close()));
    await sandbox?.close();
  });

  /** A page whose client gets `first` from its provider, then `fresh()` tokens; resolves to the token reasons after two requests. */
  async function reasonsAfterTwoRequests(page: Page, baseUrl: string, first: string, fresh: () => string | Promise<string>, path: string): Promise<string[]> {
    await page.goto(site.url);
    await page.waitForFunction(() => typeof (window as unknown as { createClient?: unknown }).createClient === 'function');
    let given = false;
    await page.exposeFunction('provide', () => (given ? fresh() : ((given = true), first)));
    return page.evaluate(
      async ([base, p]) => {
        const w = window as unknown as {
          createClient(o: object): { get(p: string): Promise<unknown>; on(t: string, l: (e: { reason: string }) => void): void };
          provide(): Promise<string>;
        };
        const reasons: string[] = [];
        const client = w.createClient({ baseUrl: base, tokenProvider: () => w.provide() });
        client.on('token', (e) => reasons.push(e.reason));
        await client.get(p);
        await client.get(p);
        await new Promise((resolve) => setTimeout(resolve, 500));
        return reasons;
      },
      [baseUrl, path] as const,
    );
  }

  test.each([
    [true, ['initial', 'proactive']],
    [false, ['initial']],
  ])('Access-Control-Expose-Headers: Date sent: %s -> tokens %j', async (exposeDate, reasons) => {
    const service = await startFakeService({ exposeDate });
    services.push(service);
    const page = await browser.context.newPage();
    expect(await reasonsAfterTwoRequests(page, service.url, service.issue('u', 880), () => service.issue('u'), '/x')).toEqual(reasons);
    await page.close();
  });

  test('the sandbox exposes Date (its own clock): a token 880 s old by that clock is refreshed ahead', async () => {
    let ahead = 0;
    sandbox = await startSandbox({ now: () => Date.now() + ahead });
    const s = sandbox;
    const old = await s.issueToken('u');
    ahead = 880_000;
    const page = await browser.context.newPage();
    expect(await reasonsAfterTwoRequests(page, s.url, old, () => s.issueToken('u'), '/open/api/v1/sdk/orders')).toEqual(['initial', 'proactive']);
    await page.close();
  });
});
