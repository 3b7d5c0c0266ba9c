/**
 * The QA demo in a real browser: Debian's Chromium driven by playwright-core. It clicks
 * through the flows and asserts what the timeline shows; screenshots go to test-results/.
 * Without Chromium the test is skipped with the reason; with CI=true it fails instead.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const hasBrowser = existsSync(executablePath);
const why = `no Chromium at ${executablePath}: install Debian's chromium (apt-get install -y chromium) or set CHROMIUM_PATH`;

if (!hasBrowser && process.env.CI !== 'true') {
  console.warn(`[e2e] browser test SKIPPED: ${why}. With CI=true this is a failure.`);
}

describe.skipIf(hasBrowser)('browser availability', () => {
  // Fails under CI=true (where .ci/run installs Chromium); elsewhere it is a visible skip.
  test(`Chromium is installed (${why})`, (context) => {
    if (process.env.CI !== 'true') context.skip();
    expect({ chromium: hasBrowser ? executablePath : why }).toEqual({ chromium: executablePath });
  });
});

describe.runIf(hasBrowser)('demo in Chromium', () => {
  let demo: { url: string; close(): Promise<void> };
  let context: BrowserContext;
  let page: Page;
  let profile: string;

  beforeAll(async () => {
    // The demo script is plain JS that imports the built package by name.
    const { startDemo } = (await import(/* @vite-ignore */ new URL('../../demo/server.mjs', import.meta.url).href)) as {
      startDemo(o: object): Promise<typeof demo>;
    };
    demo = await startDemo({ port: 0, ttl: 900, slowReceiverMs: 400, webhookTimeoutMs: 250 });
    profile = mkdtempSync(join(tmpdir(), 'channel-sdk-e2e-'));
    context = await chromium.launchPersistentContext(profile, {
      executablePath,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-quic'],
      viewport: { width: 1400, height: 1000 },
    });
    page = context.pages()[0] ?? (await context.newPage());
    page.on('pageerror', (error) => console.error('[page error]', error.message));
    await page.goto(demo.url);
    await page.waitForSelector('body[data-ready="true"]');
    mkdirSync('test-results', { recursive: true });
  }, 60_000);

  afterAll(async () => {
    await context?.close();
    await demo?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  const counter = async (name: string) => Number(await page.getByTestId(`count-${name}`).textContent());
  const waitCounter = (name: string, value: number) =>
    page.waitForFunction(([n, v]) => document.querySelector(`[data-testid="count-${n}"]`)?.textContent === String(v), [name, value] as const);
  const entries = (lane: string, kind: string) => page.locator(`#timeline li[data-lane="${lane}"][data-kind="${kind}"]`);

  test('sign in and call: token exchange, Bearer call, 200', async () => {
    await page.fill('#user', 'qa-user-1');
    await page.click('#signin');
    await page.getByTestId('call').click();
    await waitCounter('ok', 1);
    expect(await counter('provider')).toBe(1);
    expect(await entries('backend', 'exchange').count()).toBe(1);
    await expect.poll(() => entries('service', 'token-issued').count()).toBe(1);
    await expect.poll(() => entries('service', 'data-ok').count()).toBe(1);
  });

  test('after expiry, a burst of 6 calls: one forced refresh and one retry per call, no failures', async () => {
    await page.getByTestId('clear').click();
    await page.getByTestId('expire').click();
    await expect.poll(() => entries('service', 'control').count()).toBe(1);
    await page.fill('#burst-size', '6');
    await page.getByTestId('burst').click();
    await page.waitForFunction(() => document.querySelector('[data-testid="status"]')?.textContent === 'burst of 6 done');
    expect(await counter('forced')).toBe(1);
    expect(await counter('provider')).toBe(1);
    expect(await counter('401')).toBe(6);
    expect(await counter('retry')).toBe(6);
    expect(await counter('ok')).toBe(6);
    expect(await counter('failed')).toBe(0);
    expect(await page.locator('#timeline li[data-lane="sdk"][data-kind="token"]', { hasText: '(unauthorized)' }).count()).toBe(1);
    await expect.poll(() => entries('backend', 'exchange-forced').count()).toBe(1);
    await expect.poll(() => entries('service', 'data-401').count()).toBe(6);
    await expect.poll(() => entries('service', 'data-ok').count()).toBe(6);
    await page.screenshot({ path: 'test-results/demo-burst-after-expiry.png', fullPage: true });
  });

  test('next 2 calls answer 401: the replay fails too, auth:failed, no loop', async () => {
    await page.getByTestId('clear').click();
    await page.fill('#fail-n', '2');
    await page.getByTestId('fail-next').click();
    await expect.poll(() => entries('service', 'control').count()).toBe(1);
    await page.getByTestId('call').click();
    await waitCounter('failed', 1);
    expect(await counter('401')).toBe(2);
    expect(await counter('retry')).toBe(1);
    expect(await entries('sdk', 'auth-failed').count()).toBe(1);
    await expect.poll(() => page.locator('#timeline li[data-kind="call-failed"]').textContent()).toContain('UNAUTHORIZED');
  });

  test('pushes: signed accepted, tampered rejected, 500 receiver and slow receiver recorded as failed', async () => {
    await page.getByTestId('clear').click();
    await page.getByTestId('push-signed').click();
    await waitCounter('push-ok', 1);
    await expect.poll(() => entries('backend', 'push-accepted').count()).toBe(1);

    await page.getByTestId('push-tampered').click();
    await waitCounter('push-failed', 1);
    await expect.poll(() => entries('backend', 'push-rejected').count()).toBe(1);
    await expect.poll(() => entries('service', 'push-failed').last().textContent()).toContain('FAILED: HTTP 401');

    await page.getByTestId('push-fail').click();
    await waitCounter('push-failed', 2);
    await expect.poll(() => entries('service', 'push-failed').last().textContent()).toContain('FAILED: HTTP 500');

    await page.getByTestId('push-slow').click();
    await waitCounter('push-failed', 3);
    await expect.poll(() => entries('service', 'push-failed').last().textContent()).toContain('FAILED: timeout after 250 ms');
    expect(await counter('push-ok')).toBe(1);
    await page.screenshot({ path: 'test-results/demo-pushes.png', fullPage: true });
  });

  test('the whole flow on one timeline (README screenshot)', async () => {
    await page.getByTestId('clear').click();
    await page.getByTestId('call').click();
    await waitCounter('ok', 1);
    await page.getByTestId('expire').click();
    await expect.poll(() => entries('service', 'control').count()).toBe(1);
    await page.fill('#burst-size', '3');
    await page.getByTestId('burst').click();
    await waitCounter('ok', 4);
    await page.getByTestId('push-signed').click();
    await waitCounter('push-ok', 1);
    await page.getByTestId('push-tampered').click();
    await waitCounter('push-failed', 1);
    await expect.poll(() => entries('backend', 'push-rejected').count()).toBe(1);
    expect(await counter('forced')).toBe(1);
    await page.screenshot({ path: 'test-results/demo-timeline.png', fullPage: true });
  });
});
