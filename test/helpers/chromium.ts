/**
 * Debian's Chromium, driven by playwright-core, for tests of what a page does. Without
 * Chromium such tests are skipped with the reason; with CI=true (where .ci/run installs it)
 * the guard below fails instead. On a set-up machine the guard registers nothing, so a
 * passing run has no skipped test.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const hasChromium = existsSync(executablePath);
export const whyNoChromium = `no Chromium at ${executablePath}: install Debian's chromium (apt-get install -y chromium) or set CHROMIUM_PATH`;

/** The flags this machine needs: closed network, root, no GPU. */
export const chromiumFlags = [
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
];

/** Chromium with {@link chromiumFlags} and a fresh profile per launch. */
export async function launchChromium(viewport = { width: 1400, height: 1000 }): Promise<{ context: BrowserContext; page: Page; close(): Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), 'channel-sdk-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: chromiumFlags,
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

/** A raw node:http server on 127.0.0.1:0, the handler in full control (no CORS added). */
export async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/**
 * A page that puts `names` of the browser entry on `window`, bundled from the package by its
 * name the way a user's bundler would (esbuild, browser conditions), served at `url`.
 */
export async function servePackagePage(names: string[]): Promise<{ server: Server; url: string }> {
  return serveBundledPage(`import { ${names.join(', ')} } from 'channel-sdk'; Object.assign(window, { ${names.join(', ')} });`);
}

/**
 * A page running `source` (an ES module that may import the package by its name and any
 * devDependency), bundled as a user's bundler would (esbuild, browser conditions), served at `url`.
 */
export async function serveBundledPage(source: string): Promise<{ server: Server; url: string }> {
  const bundle = await bundleSource(source);
  return listen((req, res) => {
    if (req.url === '/bundle.js') return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle);
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><script type="module" src="/bundle.js"></script><body>channel-sdk</body>');
  });
}

/** `source` (an ES module importing the package by its name) bundled as a user's bundler would: esbuild, browser conditions. */
export async function bundleSource(source: string): Promise<string> {
  const bundle = await build({
    stdin: { contents: source, resolveDir: process.cwd(), loader: 'js' },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    write: false,
    logLevel: 'silent',
  });
  return bundle.outputFiles[0].text;
}

/** Chromium on a page of `names` (servePackagePage), loaded; close() ends both. */
export async function openPackagePage(names: string[]): Promise<{ page: Page; context: BrowserContext; close(): Promise<void> }> {
  return openBundledPage(`import { ${names.join(', ')} } from 'channel-sdk'; Object.assign(window, { ${names.join(', ')} });`, names[0]);
}

/** Chromium on a page running `source` (serveBundledPage), loaded once `ready` names a function on window; close() ends both. */
export async function openBundledPage(source: string, ready: string): Promise<{ page: Page; context: BrowserContext; close(): Promise<void> }> {
  const site = await serveBundledPage(source);
  const browser = await launchChromium();
  await browser.page.goto(site.url);
  await browser.page.waitForFunction((name) => typeof (window as unknown as Record<string, unknown>)[name] === 'function', ready);
  return {
    page: browser.page,
    context: browser.context,
    close: async () => {
      await browser.close();
      site.server.close();
    },
  };
}
