/**
 * The README's examples, run as written against the sandbox. A test replaces only the two
 * placeholder hosts, as the README tells a reader trying them to: https://channel.example.com
 * (the service) becomes the sandbox's URL, and https://partner.example.com (your backend) the
 * README's own Express recipe (examples/backend/express.ts), booted here, whose token route
 * must accept what the mini-program page sends. Environment variables stand in for a
 * deployment's configuration. `npm run test:examples` runs them all in fresh projects.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import vm from 'node:vm';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/testing.js';
import { createHost } from '../helpers/hosts.js';

let sandbox: Sandbox;
let backend: { url: string; close(): Promise<void> };
const routeCalls: Array<{ url: string; status: number }> = [];

beforeAll(async () => {
  sandbox = await startSandbox();
  vi.stubEnv('CHANNEL_BASE_URL', sandbox.url);
  vi.stubEnv('CHANNEL_ACCESS_KEY', sandbox.credentials.accessKey);
  vi.stubEnv('CHANNEL_SECRET_KEY', sandbox.credentials.secretKey);
  const { app } = await import('../../examples/backend/express.js');
  const server = createServer((req, res) => {
    res.on('finish', () => routeCalls.push({ url: req.url ?? '', status: res.statusCode }));
    app(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  backend = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
});
afterAll(async () => {
  vi.unstubAllEnvs();
  await backend?.close();
  await sandbox?.close();
});

const placeholders = (code: string) => code.replaceAll('https://channel.example.com', sandbox.url).replaceAll('https://partner.example.com', backend.url);

test('examples/node-client.ts runs against the sandbox: a schema-checked, typed logistics read', async () => {
  const log = vi.spyOn(console, 'log').mockImplementation(() => {});
  try {
    await import(/* @vite-ignore */ new URL('../../examples/node-client.ts', import.meta.url).href);
    expect(log.mock.calls).toEqual([['SO20240601001', 'in_transit']]);
  } finally {
    log.mockRestore();
  }
});

test("examples/own-client.ts runs against the sandbox: ofetch over client.fetch, the sandbox's 401 costs one forced refresh and one replay", async () => {
  const log = vi.spyOn(console, 'log').mockImplementation(() => {});
  try {
    // What the README's try line does first: `channel-sandbox fail-next` (the next data call answers 401).
    sandbox.failNext(1);
    const before = { ...sandbox.stats };
    await import(/* @vite-ignore */ new URL('../../examples/own-client.ts', import.meta.url).href);
    expect(log.mock.calls).toEqual([['SO20240601001', 'forced refreshes:', 1]]);
    const after = sandbox.stats;
    // Two exchanges (the first token, the forced one), one 401, two data calls (the 401 and the replay).
    expect([after.tokenCalls - before.tokenCalls, after.unauthorized - before.unauthorized, after.dataCalls - before.dataCalls]).toEqual([2, 1, 2]);
  } finally {
    log.mockRestore();
  }
});

/** A WeChat runtime for one launch: wx (request over real HTTP, storage), getApp, Page, require. */
function launchPage(storage: Map<string, unknown>) {
  const bundle = readFileSync('miniprogram_dist/index.js', 'utf8');
  const wx = {
    ...createHost('wx'),
    getStorageSync: (key: string) => (storage.has(key) ? storage.get(key) : ''),
    setStorageSync: (key: string, value: unknown) => void storage.set(key, JSON.parse(JSON.stringify(value))),
    removeStorageSync: (key: string) => void storage.delete(key),
  };
  let page: { data: Record<string, unknown>; onLoad(): void; onUnload(): void; setData(d: object): void } | undefined;
  const updates: Array<Record<string, unknown>> = [];
  const context = vm.createContext({
    setTimeout,
    clearTimeout,
    wx,
    // What the reader's login stored: the stand-in session of examples/backend/your-app.ts.
    getApp: () => ({ globalData: { session: 'demo-session', userId: 'user-1' } }),
    Page: (definition: typeof page & object) => {
      page = Object.assign(definition, { setData: (d: Record<string, unknown>) => updates.push(d) });
    },
  });
  // What WeChat's npm build gives `require('channel-sdk/miniprogram')`: miniprogram_dist.
  const sdk = { exports: {} };
  vm.runInContext(`(function (module, exports) {${bundle}\n})`, context)(sdk, sdk.exports);
  const require = (id: string) => {
    if (id !== 'channel-sdk/miniprogram') throw new Error('unexpected require ' + id);
    return sdk.exports;
  };
  vm.runInContext(`(function (require) {${placeholders(readFileSync('examples/miniprogram-page.js', 'utf8'))}\n})`, context)(require);
  return { page: page!, updates };
}

test("examples/miniprogram-page.js in a WeChat-like realm, against the README's Express token route (x-session): orders shown, a relaunch asks the route nothing", async () => {
  const storage = new Map<string, unknown>();
  const first = launchPage(storage);
  routeCalls.length = 0;
  first.page.onLoad();
  await expect.poll(() => first.updates.length).toBe(1);
  expect(first.updates).toEqual([{ orders: expect.arrayContaining([expect.objectContaining({ order_no: 'SO20240601001' })]) }]);
  expect(routeCalls).toEqual([{ url: '/channel-token', status: 200 }]);

  const second = launchPage(storage);
  second.page.onLoad();
  await expect.poll(() => second.updates.length).toBe(1);
  expect(second.updates[0]).toHaveProperty('orders');
  expect(routeCalls).toHaveLength(1);
  second.page.onUnload();
});

test("the README's Express token route: a page's session cookie or a mini-program's x-session, 401 for neither or an unknown one", async () => {
  const status = (headers: Record<string, string>) => fetch(backend.url + '/channel-token', { headers }).then((r) => r.status);
  expect(await status({ cookie: 'session=demo-session' })).toBe(200);
  expect(await status({ 'x-session': 'demo-session' })).toBe(200);
  expect(await status({})).toBe(401);
  expect(await status({ 'x-session': 'forged' })).toBe(401);
  expect(await status({ cookie: 'session=forged' })).toBe(401);
});
