// @vitest-environment node
/**
 * createMockHost's app life and network (issue #45 item 5): hide(), show(), setNetwork() and
 * interrupt(), with the host's own onAppShow/onAppHide, onNetworkStatusChange and getNetworkType,
 * so that partners test their pages in those states; and the SDK's client over it, as on a device.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { createClient, type NetworkError } from '../../../src/miniprogram.js';
import { createMockHost, SANDBOX_PATHS, type MockHostOptions } from '../../../src/testing.js';

const uninstall: Array<() => void> = [];
afterEach(() => uninstall.splice(0).forEach((undo) => undo()));

/** A host installed as its global, and a page's client that asks its token route over it. */
function page(options: MockHostOptions = {}, extra: Record<string, unknown> = {}) {
  const host = createMockHost(options);
  uninstall.push(host.install());
  const client = createClient({
    baseUrl: 'https://channel.example.com',
    tokenProvider: ({ forceRefresh }) =>
      new Promise<string>((resolve, reject) => {
        host.request({
          url: 'https://partner.example.com/channel-token' + (forceRefresh ? '?force=1' : ''),
          success: (r: { statusCode: number; data: { access_token: string } }) =>
            r.statusCode === 200 ? resolve(r.data.access_token) : reject(new Error('token route ' + r.statusCode)),
          fail: (e: { errMsg: string }) => reject(new Error(e.errMsg)),
        });
      }),
    retry: { delay: () => 1 },
    ...extra,
  });
  return { host, client };
}

const settled = () => new Promise((resolve) => setTimeout(resolve, 10));

describe("createMockHost: the host's own app-life and network functions", () => {
  test('wx: onAppHide/onAppShow with their payloads, onNetworkStatusChange and getNetworkType, off* removing', async () => {
    const host = createMockHost();
    const seen: unknown[] = [];
    const onShow = (o: unknown) => seen.push(['show', o]);
    host.onAppShow(onShow);
    host.onAppHide((o) => seen.push(['hide', o]));
    host.onNetworkStatusChange((o) => seen.push(['network', o]));
    host.hide();
    host.show();
    host.setNetwork({ isConnected: false });
    const type = await new Promise((resolve) => host.getNetworkType({ success: resolve }));
    host.offAppShow(onShow);
    host.show();
    expect(seen).toEqual([
      ['hide', { reason: 0 }],
      ['show', expect.objectContaining({ path: 'pages/index/index', scene: 1001 })],
      ['network', { isConnected: false, networkType: 'none' }],
    ]);
    expect(type).toEqual({ networkType: 'none', errMsg: 'getNetworkType:ok' });
    expect([host.visible, host.isConnected]).toEqual([true, false]);
  });

  test("my: Alipay's shapes (networkAvailable, NOTREACHABLE; onAppHide with nothing)", async () => {
    const host = createMockHost({ kind: 'my' });
    const seen: unknown[] = [];
    host.onAppHide((o) => seen.push(o));
    host.onNetworkStatusChange((o) => seen.push(o));
    host.hide();
    host.setNetwork({ isConnected: false });
    expect(seen).toEqual([undefined, { isConnected: false, networkType: 'NOTREACHABLE' }]);
    expect(await new Promise((resolve) => host.getNetworkType({ success: resolve }))).toEqual({ networkAvailable: false, networkType: 'NOTREACHABLE' });
  });

  test('offline, a request fails as on a device; interrupt() fails the calls in flight with request:fail interrupted', async () => {
    const host = createMockHost({ routes: { '/slow': () => new Promise((resolve) => setTimeout(() => resolve({ body: 'late' }), 200)) } });
    host.setNetwork({ isConnected: false });
    const offline = await new Promise((resolve) => host.request({ url: 'https://partner.example.com/x', fail: resolve }));
    expect(offline).toMatchObject({ errMsg: expect.stringMatching(/^request:fail .*ERR_INTERNET_DISCONNECTED/), errno: 600001 });
    host.setNetwork({ isConnected: true });
    const cut = new Promise((resolve) => host.request({ url: 'https://partner.example.com/slow', fail: resolve }));
    host.hide();
    host.interrupt();
    expect(await cut).toEqual({ errMsg: 'request:fail interrupted', errno: 600003 });
    expect(host.calls.map((c) => c.failure)).toEqual(['network', 'interrupted']);
  });

  test('setNetwork() checks its argument', () => {
    expect(() => createMockHost().setNetwork(false as never)).toThrow(/setNetwork takes \{ isConnected: true \| false \}/);
  });
});

describe('the SDK over createMockHost in each state', () => {
  test('pre-warm: a token that ended while the app was hidden is refreshed on show; the first call after it asks nothing', async () => {
    let clock = Date.now();
    const now = () => clock;
    const { host, client } = page({ tokenTtlSeconds: 600, now }, { now });
    await client.get(SANDBOX_PATHS.orders);
    host.hide();
    clock += 601_000;
    host.show();
    await settled();
    expect(host.stats).toMatchObject({ tokenRouteCalls: 2, forcedRefreshes: 1 });
    await client.get(SANDBOX_PATHS.orders);
    expect(host.stats).toMatchObject({ tokenRouteCalls: 2, unauthorized: 0 });
  });

  test('offline: a GET waits and goes once the network is back; a POST fails at once with NetworkError (offline)', async () => {
    const { host, client } = page();
    await client.get(SANDBOX_PATHS.orders);
    host.setNetwork({ isConnected: false });
    const get = client.get<{ orders: unknown[] }>(SANDBOX_PATHS.orders);
    const post = (await client.post(SANDBOX_PATHS.echo, { json: { a: 1 } }).catch((e: unknown) => e)) as NetworkError;
    expect(post).toMatchObject({ code: 'NETWORK_ERROR', offline: true });
    await settled();
    expect(host.stats.requests).toBe(2);
    host.setNetwork({ isConnected: true });
    expect((await get).orders).toHaveLength(2);
    expect(host.stats.requests).toBe(3);
  });

  test('interrupted while hidden: the GET goes again on show and resolves', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const { host, client } = page({ routes: { 'GET /held': async () => (await gate, { body: { code: 0, data: 'held' } }) } });
    await client.get(SANDBOX_PATHS.orders);
    const call = client.get('/held');
    await settled();
    host.hide();
    host.interrupt();
    await settled();
    const before = host.stats.requests;
    release();
    host.show();
    await expect(call).resolves.toBe('held');
    expect(host.stats.requests).toBe(before + 1);
    expect(host.calls.filter((c) => c.url.endsWith('/held')).map((c) => c.failure ?? c.status)).toEqual(['interrupted', 200]);
  });
});
