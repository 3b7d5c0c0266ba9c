/**
 * examples/browser-quick-start.ts as a page runs it: happy-dom's window is on the reader's
 * backend origin (which serves /channel-token), the service is the sandbox: CHANNEL_BASE_URL,
 * which the reader's build defines, is the sandbox's URL.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/testing.js';
import { sendJson, startServer, type TestServer } from '../helpers/server.js';

let sandbox: Sandbox;
let backend: TestServer;
const routeCalls: string[] = [];

beforeAll(async () => {
  sandbox = await startSandbox();
  // The reader's backend mints tokens with the sandbox directly: in this happy-dom realm
  // fetch is the page's, and the token endpoint rightly answers no CORS to a page.
  backend = await startServer(async (req, res) => {
    routeCalls.push(req.url ?? '');
    sendJson(res, 200, { access_token: await sandbox.issueToken('user-42') });
  });
  (window as unknown as { happyDOM: { setURL(url: string): void } }).happyDOM.setURL(backend.url + '/orders.html');
});
afterAll(async () => {
  await backend?.close();
  await sandbox?.close();
});

test('examples/browser-quick-start.ts: lists the orders, creates one, a 401 later costs one forced refresh', async () => {
  // The build's --define: the service's URL, here the sandbox's.
  (globalThis as { CHANNEL_BASE_URL?: string }).CHANNEL_BASE_URL = sandbox.url;
  const code = readFileSync('examples/browser-quick-start.ts', 'utf8');
  mkdirSync('.readme-check', { recursive: true });
  writeFileSync('.readme-check/browser-quick-start.run.ts', code);
  const log = vi.spyOn(console, 'log').mockImplementation(() => {});
  const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
  try {
    const page = (await import(/* @vite-ignore */ resolve('.readme-check/browser-quick-start.run.ts'))) as {
      client: { get(path: string): Promise<unknown> };
    };
    expect(warn.mock.calls).toEqual([]);
    expect(log.mock.calls).toEqual([[2, 'orders;', 'SO20240601001', 'in_transit', '; created', expect.stringMatching(/^SO\d+$/)]]);
    expect(routeCalls).toEqual(['/channel-token']);
    sandbox.expireTokens();
    await page.client.get('/open/api/v1/sdk/orders');
    expect(routeCalls).toEqual(['/channel-token', expect.stringMatching(/^\/channel-token\?force=1&rejected=\w+$/)]);
  } finally {
    log.mockRestore();
    warn.mockRestore();
  }
});
