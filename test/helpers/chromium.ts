/**
 * Debian's Chromium, driven by playwright-core, for tests of what a page does. Without
 * Chromium such tests are skipped with the reason; with CI=true (where .ci/run installs it)
 * the guard below fails instead. On a set-up machine the guard registers nothing, so a
 * passing run has no skipped test.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const hasChromium = existsSync(executablePath);
export const whyNoChromium = `no Chromium at ${executablePath}: install Debian's chromium (apt-get install -y chromium) or set CHROMIUM_PATH`;

/** The flags this machine needs (closed network, root, no GPU), and a fresh profile per launch. */
export async function launchChromium(viewport = { width: 1400, height: 1000 }): Promise<{ context: BrowserContext; page: Page; close(): Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), 'channel-sdk-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-quic'],
    viewport,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
