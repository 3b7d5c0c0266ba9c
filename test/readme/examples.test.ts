/**
 * The README's examples, run as written against the sandbox. A test replaces only the two
 * placeholder hosts: https://channel.example.com (the service) becomes the sandbox's URL, and
 * https://partner.example.com (your backend) a token route this test serves with
 * createTokenExchange, as the reader's backend would. Environment variables stand in for a
 * deployment's configuration.
 */
import { readFileSync } from 'node:fs';
import vm from 'node:vm';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { createTokenExchange } from '../../src/server-node.js';
import { startSandbox, type Sandbox } from '../../src/testing.js';
import { createHost } from '../helpers/hosts.js';
import { startServer, sendJson, type TestServer } from '../helpers/server.js';

let sandbox: Sandbox;
let backend: TestServer;
let routeCalls = 0;

beforeAll(async () => {
  sandbox = await startSandbox();
  const exchange = createTokenExchange({ baseUrl: sandbox.url, ...sandbox.credentials });
  // The reader's token route: { access_token }, ?force=1 bypasses the cache.
  backend = await startServer(async (req, res) => {
    routeCalls++;
    const force = (req.url ?? '').includes('force=1');
    const { accessToken } = await exchange.getToken('user-42', { forceRefresh: force });
    sendJson(res, 200, { access_token: accessToken });
  });
  Object.assign(process.env, { CHANNEL_BASE_URL: sandbox.url, CHANNEL_ACCESS_KEY: sandbox.credentials.accessKey, CHANNEL_SECRET_KEY: sandbox.credentials.secretKey });
});
afterAll(async () => {
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
    getApp: () => ({ globalData: { session: 'session-1', userId: 'user-42' } }),
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

test('examples/miniprogram-page.js runs in a WeChat-like realm: orders shown, and a relaunch asks the token route nothing', async () => {
  const storage = new Map<string, unknown>();
  const first = launchPage(storage);
  const before = routeCalls;
  first.page.onLoad();
  await expect.poll(() => first.updates).toEqual([{ orders: expect.arrayContaining([expect.objectContaining({ order_no: 'SO20240601001' })]) }]);
  expect(routeCalls - before).toBe(1);

  const second = launchPage(storage);
  second.page.onLoad();
  await expect.poll(() => second.updates.length).toBe(1);
  expect(second.updates[0]).toHaveProperty('orders');
  expect(routeCalls - before).toBe(1);
  second.page.onUnload();
});
