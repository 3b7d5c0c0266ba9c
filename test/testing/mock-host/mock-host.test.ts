// @vitest-environment node
/**
 * createMockHost (channel-sdk/testing, issue #35 item 4): an in-process mini-program host for
 * partners' page tests. The SDK's own mini-program client runs over it as it runs over a device:
 * tokens from a token route, the sandbox's data, 401s after expireTokens(), files, storage.
 */
import { afterEach, describe, expect, test, vi } from 'vitest';
import { createClient, hostTokenStore, UnauthorizedError } from '../../../src/miniprogram.js';
import { ConfigError } from '../../../src/errors/index.js';
import { createMockHost, SANDBOX_PATHS, type MockHost, type MockHostOptions } from '../../../src/testing.js';

const uninstall: Array<() => void> = [];
afterEach(() =>
  uninstall
    .splice(0)
    .toReversed()
    .forEach((undo) => undo()),
);

/** A host installed as its global, and a client that asks its token route as a page would. */
function page(options: MockHostOptions = {}, extra: Record<string, unknown> = {}, host = createMockHost(options)) {
  uninstall.push(host.install());
  const wx = host as MockHost & { request(o: object): unknown };
  const forced: boolean[] = [];
  const client = createClient({
    baseUrl: 'https://channel.example.com',
    tokenProvider: ({ forceRefresh }) =>
      new Promise<string>((resolve, reject) => {
        forced.push(forceRefresh);
        wx.request({
          url: 'https://partner.example.com/channel-token' + (forceRefresh ? '?force=1' : ''),
          success: (r: { statusCode: number; data: { access_token: string } }) =>
            r.statusCode === 200 ? resolve(r.data.access_token) : reject(new Error('token route ' + r.statusCode)),
          fail: (e: { errMsg: string }) => reject(new Error(e.errMsg)),
        });
      }),
    ...extra,
  });
  return { host, client, forced };
}

describe('createMockHost: the SDK over it, as over a device', () => {
  test("installed as wx: the sandbox's orders; after expireTokens() one 401, one forced refresh, one replay", async () => {
    const { host, client, forced } = page();
    expect((await client.get<{ orders: unknown[] }>(SANDBOX_PATHS.orders)).orders).toHaveLength(2);
    host.expireTokens();
    expect((await client.get<{ orders: unknown[] }>(SANDBOX_PATHS.orders)).orders).toHaveLength(2);
    expect(forced).toEqual([false, true]);
    expect(host.stats).toMatchObject({ tokenRouteCalls: 2, forcedRefreshes: 1, tokensIssued: 2, dataCalls: 3, unauthorized: 1 });
    expect(host.calls.map((c) => [c.url.replace(/^https:\/\/[^/]+/, ''), c.status, c.token])).toEqual([
      ['/channel-token', 200, undefined],
      [SANDBOX_PATHS.orders, 200, 1],
      [SANDBOX_PATHS.orders, 401, 1],
      ['/channel-token?force=1', 200, undefined],
      [SANDBOX_PATHS.orders, 200, 2],
    ]);
  });

  test('failNext(2): the replay fails too, UnauthorizedError and auth:failed, no third try; failNext(1, 503): a GET is retried', async () => {
    const { host, client } = page();
    await client.get(SANDBOX_PATHS.orders);
    const failed = vi.fn<() => void>();
    client.on('auth:failed', failed);
    host.failNext(2);
    await expect(client.get(SANDBOX_PATHS.orders)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(failed).toHaveBeenCalledTimes(1);
    host.failNext(1, { status: 503, retryAfterSeconds: 0 });
    await expect(client.get(SANDBOX_PATHS.orders, { retry: { limit: 1, delay: () => 1 } })).resolves.toMatchObject({ orders: expect.any(Array) });
    expect(host.calls.filter((c) => c.url.endsWith(SANDBOX_PATHS.orders)).map((c) => c.status)).toEqual([200, 401, 401, 503, 200]);
  });

  test('hostTokenStore keeps the token in the host storage: a relaunch (a new client on the same host) asks the token route nothing', async () => {
    const host = createMockHost();
    uninstall.push(host.install()); // hostTokenStore finds the global wx
    const store = () => ({ tokenStore: hostTokenStore({ key: () => 'user-1' }) });
    const first = page({}, store(), host);
    await first.client.get(SANDBOX_PATHS.orders);
    const second = page({}, store(), host);
    await second.client.get(SANDBOX_PATHS.orders);
    expect([first.forced, second.forced, host.stats.tokenRouteCalls]).toEqual([[false], [], 1]);
    // One record per service (#29 item 1): the slot names the client's baseUrl.
    const slots = [...host.storage.keys()].filter((k) => k.startsWith('channel-sdk:token'));
    expect(slots).toHaveLength(1);
    expect(JSON.parse(String(host.storage.get(slots[0])))).toMatchObject({ key: 'user-1', token: expect.stringMatching(/^eyJ/) });
  });

  test('files: an upload from host.files reaches the sandbox intact; a download after expireTokens() costs one forced refresh and removes the 401 body', async () => {
    const { host, client, forced } = page();
    const bytes = new Uint8Array(Array.from({ length: 50_000 }, (_, i) => (i * 7) & 255));
    host.files.set('wxfile://tmp_photo.jpg', bytes);
    const progress: number[] = [];
    const photo = await client.upload<{ url: string; size: number; field: string; file_name: string; fields: object }>(SANDBOX_PATHS.photos, {
      filePath: 'wxfile://tmp_photo.jpg',
      name: 'file',
      formData: { order_no: 'SO20240601001' },
      onProgress: (p) => progress.push(p.percent),
    });
    expect(photo).toMatchObject({ url: 'https://channel.example.com/open/api/v1/sdk/photos/ph_1', size: 50_000, field: 'file', file_name: 'tmp_photo.jpg' });
    expect(photo.fields).toEqual({ order_no: 'SO20240601001' });
    expect(progress.at(-1)).toBe(1);
    host.expireTokens();
    const { tempFilePath } = await client.download(photo.url);
    expect(tempFilePath).toMatch(/^wxfile:\/\/tmp_\d+$/);
    expect(host.getFileSystemManager().readFileSync(tempFilePath)).toEqual(bytes.buffer);
    expect(forced).toEqual([false, true]);
    // The 401's body was written where the file goes, and the SDK removed it (unlink): only the photo and the file remain.
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect([...host.files.keys()]).toEqual(['wxfile://tmp_photo.jpg', tempFilePath]);
    const invoice = await client.download('/open/api/v1/sdk/invoices/SO20240601001', { filePath: 'wxfile://usr/invoice.pdf' });
    expect([invoice.filePath, host.getFileSystemManager().readFileSync('wxfile://usr/invoice.pdf', 'latin1').slice(0, 8)]).toEqual([
      'wxfile://usr/invoice.pdf',
      '%PDF-1.4',
    ]);
  });

  test('an upload of a file the host does not have fails with the way to put one there', async () => {
    const { client } = page();
    await expect(client.upload(SANDBOX_PATHS.photos, { filePath: 'wxfile://nothing.jpg', name: 'file' })).rejects.toThrow(
      /no such file or directory wxfile:\/\/nothing\.jpg \(createMockHost keeps files in memory: put one there with host\.files\.set/,
    );
  });

  test('the 10-call limit: an 11th request in flight fails as WeChat fails it; the SDK queues its calls under it, one slot kept for the token route', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const host = createMockHost({ routes: { 'GET /slow': async () => (await held, { body: { code: 0, data: 'late' } }) } });
    const results: unknown[] = [];
    for (let i = 0; i < 11; i++)
      host.request({ url: 'https://x.example/slow', success: (r: unknown) => results.push(r), fail: (e: unknown) => results.push(e) });
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(results).toEqual([{ errMsg: 'request:fail exceed max task count', errno: 600000 }]);
    release();
    await vi.waitFor(() => expect(results).toHaveLength(11));
    expect(host.stats.maxInFlight).toBe(11);

    let free!: () => void;
    const gate = new Promise<void>((resolve) => (free = resolve));
    const { host: second, client } = page({ service: { 'GET /open/api/v1/sdk/slow': async () => (await gate, { body: { code: 0, data: 1 } }) } });
    const calls = Array.from({ length: 25 }, () => client.get('/open/api/v1/sdk/slow'));
    // The SDK runs its own calls at one under the limit: a slot stays free for the tokenProvider's own request (#29 item 10).
    await vi.waitFor(() => expect(second.calls.filter((c) => c.url.endsWith('/slow'))).toHaveLength(9));
    free();
    expect(await Promise.all(calls)).toEqual(Array(25).fill(1));
    expect(second.stats.maxInFlight).toBe(9);
  });

  test('abort() fails a call with the host abort; a route that never answers fails at the call timeout', async () => {
    const host = createMockHost({ routes: { '/never': () => new Promise(() => {}) } });
    const seen: unknown[] = [];
    const task = host.request({ url: 'https://x.example/never', fail: (e: unknown) => seen.push(e) }) as { abort(): void };
    task.abort();
    host.request({ url: 'https://x.example/never', timeout: 20, fail: (e: unknown) => seen.push(e) });
    await vi.waitFor(() => expect(seen).toHaveLength(2));
    expect(seen).toEqual([
      { errMsg: 'request:fail abort', errno: 1 },
      { errMsg: 'request:fail timeout', errno: 5 },
    ]);
    expect(host.calls.map((c) => c.failure)).toEqual(['abort', 'timeout']);
  });
});

describe('createMockHost: routes', () => {
  test("your routes get the request (params, query, headers, JSON body) unchecked; service routes are checked like the sandbox's", async () => {
    const seen: unknown[] = [];
    const host = createMockHost({
      routes: { 'POST https://partner.example.com/carts/:id': (r) => (seen.push(r), { status: 201, body: { ok: true } }) },
      service: { 'GET /v2/orders/:no': (r) => ({ body: { code: 0, data: { no: r.params.no } } }) },
    });
    const call = (options: object) => new Promise<Record<string, unknown>>((resolve) => host.request({ ...options, success: resolve, fail: resolve }));
    expect(await call({ url: 'https://partner.example.com/carts/c%201?x=1', method: 'POST', data: { sku: 'A1' }, header: { 'X-Trace': 't1' } })).toMatchObject({
      statusCode: 201,
      data: { ok: true },
    });
    expect(seen).toEqual([
      expect.objectContaining({ method: 'POST', path: '/carts/c%201', params: { id: 'c 1' }, query: { x: '1' }, body: '{"sku":"A1"}', json: { sku: 'A1' } }),
    ]);
    expect((seen[0] as { headers: object }).headers).toEqual({ 'x-trace': 't1' });
    expect(await call({ url: 'https://api.example.com/v2/orders/SO1' })).toMatchObject({ statusCode: 401, data: { code: 40100 } });
    const token = host.issueToken('u1');
    expect(await call({ url: 'https://api.example.com/v2/orders/SO1', header: { Authorization: 'Bearer ' + token } })).toMatchObject({
      statusCode: 200,
      data: { code: 0, data: { no: 'SO1' } },
      header: { 'Content-Type': 'application/json; charset=utf-8', Date: expect.any(String) },
    });
    host.expireTokens();
    expect(await call({ url: 'https://api.example.com/v2/orders/SO1', header: { Authorization: 'Bearer ' + token } })).toMatchObject({ statusCode: 401 });
    expect(host.stats).toMatchObject({ dataCalls: 3, unauthorized: 2 });
  });

  test('a route that throws (or answers with a misspelt key) answers 500 saying so; nothing matching answers 404 listing what is served', async () => {
    const host = createMockHost({
      sandboxData: false,
      routes: {
        'GET /boom': () => {
          throw new Error('fixture missing');
        },
        'GET /typo': () => ({ stauts: 404 }) as never,
      },
    });
    const call = (url: string) => new Promise<Record<string, unknown>>((resolve) => host.request({ url, success: resolve }));
    expect(await call('https://x.example/boom')).toMatchObject({
      statusCode: 500,
      data: { message: 'createMockHost: the route for GET /boom threw: fixture missing' },
    });
    expect(await call('https://x.example/typo')).toMatchObject({
      statusCode: 500,
      data: { message: 'createMockHost: the route for GET /typo threw: [channel-sdk] unknown route answer key "stauts"; did you mean "status"?' },
    });
    expect(await call('https://x.example/open/api/v1/sdk/orders')).toMatchObject({
      statusCode: 404,
      data: {
        message:
          'createMockHost: nothing answers GET https://x.example/open/api/v1/sdk/orders; it answers GET /boom, GET /typo, the token route /channel-token',
      },
    });
  });

  test('the token route: the held token until ?force=1 or a POSTed forceRefresh; 401 once host.user is null', async () => {
    const host = createMockHost({ tokenRoute: 'https://partner.example.com/token', tokenTtlSeconds: 60 });
    const call = (url: string, method = 'GET', data?: string) =>
      new Promise<{ statusCode: number; data: { access_token?: string; expires_in?: number } }>((resolve) =>
        host.request({ url, method, data, success: resolve }),
      );
    const a = await call('https://partner.example.com/token');
    expect([a.statusCode, a.data.expires_in]).toEqual([200, 60]);
    expect((await call('https://partner.example.com/token')).data.access_token).toBe(a.data.access_token);
    const b = await call('https://partner.example.com/token?force=1');
    const c = await call('https://partner.example.com/token', 'POST', '{"forceRefresh":true}');
    expect(new Set([a, b, c].map((r) => r.data.access_token)).size).toBe(3);
    expect(host.verifyToken(c.data.access_token!)).toMatchObject({ valid: true, claims: { sub: 'user-1' } });
    expect((await call('https://other.example/token')).statusCode).toBe(404);
    host.user = null;
    expect((await call('https://partner.example.com/token')).statusCode).toBe(401);
    expect(host.stats).toMatchObject({ tokenRouteCalls: 4, forcedRefreshes: 2 });
  });

  test('bad options are ConfigErrors that say what to write', () => {
    expect(() => createMockHost({ rutes: {} } as never)).toThrow(/unknown createMockHost option "rutes"; did you mean "routes"\?/);
    expect(() => createMockHost({ kind: 'weixin' as never })).toThrow(ConfigError);
    expect(() => createMockHost({ routes: { 'get /x': () => ({}) } })).toThrow(/write 'GET \/path'/);
    expect(() => createMockHost({ service: { 'GET /x': { body: 1 } as never } })).toThrow(/must be a function/);
    expect(() => createMockHost({ tokenRoute: 'channel-token' })).toThrow(/tokenRoute must be a path/);
    expect(() => createMockHost({ allowedOrigins: ['channel.example.com'] })).toThrow(/list of origins/);
  });
});

describe('createMockHost: the host', () => {
  test("WeChat storage: ('key', data), '' when missing, JSON copies, async forms; Alipay: ({ key, data }) → { data }, null when missing", async () => {
    const wx = createMockHost();
    const value = { a: 1, at: new Date(0) };
    wx.setStorageSync('k', value);
    value.a = 2;
    expect([wx.getStorageSync('k'), wx.getStorageSync('missing')]).toEqual([{ a: 1, at: '1970-01-01T00:00:00.000Z' }, '']);
    const got = await new Promise((resolve) => wx.getStorage({ key: 'k', success: resolve }));
    expect(got).toEqual({ data: { a: 1, at: '1970-01-01T00:00:00.000Z' }, errMsg: 'getStorage:ok' });
    expect(await new Promise((resolve) => wx.getStorage({ key: 'missing', fail: resolve }))).toEqual({ errMsg: 'getStorage:fail data not found' });
    wx.removeStorageSync('k');
    expect(wx.storage.size).toBe(0);

    const my = createMockHost({ kind: 'my' });
    my.setStorageSync({ key: 'k', data: 'v' });
    expect([my.getStorageSync({ key: 'k' }), my.getStorageSync({ key: 'missing' })]).toEqual([{ data: 'v' }, { data: null }]);
    expect(() => my.getStorageSync('k')).toThrow(/passed as \{ key \}/);
    const taro = createMockHost({ kind: 'Taro' });
    taro.setStorageSync('k', 1);
    await expect(taro.getStorage({ key: 'k' })).resolves.toEqual({ data: 1, errMsg: 'getStorage:ok' });
  });

  test('Alipay: my.request gives HTTP errors to fail with error 19; the SDK over it (installed as my) refreshes once after expireTokens()', async () => {
    const host = createMockHost({ kind: 'my' });
    const failed = await new Promise((resolve) => host.request({ url: 'https://x.example/open/api/v1/sdk/orders', fail: resolve }));
    expect(failed).toMatchObject({ error: 19, errorMessage: 'http status error', status: 401, headers: { 'content-type': 'application/json; charset=utf-8' } });
    uninstall.push(host.install());
    const client = createClient({ baseUrl: 'https://channel.example.com', tokenProvider: () => host.issueToken('u1') });
    await client.get(SANDBOX_PATHS.orders);
    host.expireTokens();
    await expect(client.get(SANDBOX_PATHS.orders)).resolves.toMatchObject({ orders: expect.any(Array) });
    host.files.set('https://resource/apml1.jpg', new Uint8Array([1, 2, 3]));
    await expect(client.upload(SANDBOX_PATHS.photos, { filePath: 'https://resource/apml1.jpg', name: 'file' })).resolves.toMatchObject({ size: 3 });
    expect(host.calls.map((c) => c.status)).toEqual([401, 200, 401, 200, 200]);
  });

  test('Taro: request returns a Promise carrying abort(), and still calls back', async () => {
    const host = createMockHost({ kind: 'Taro' });
    const success = vi.fn<(r: unknown) => void>();
    const task = host.request({ url: 'https://x.example/channel-token', success }) as Promise<{ statusCode: number }> & { abort: unknown };
    expect(typeof task.abort).toBe('function');
    expect((await task).statusCode).toBe(200);
    expect(success).toHaveBeenCalledTimes(1);
  });

  test('allowedOrigins: other origins fail as outside the domain list; install() puts back what was there', async () => {
    const host = createMockHost({ allowedOrigins: ['https://channel.example.com'] });
    expect(await new Promise((resolve) => host.request({ url: 'https://evil.example/x', fail: resolve }))).toEqual({
      errMsg: 'request:fail url not in domain list',
      errno: 600002,
    });
    const global = globalThis as { wx?: unknown };
    global.wx = 'before';
    const undo = host.install();
    expect(global.wx).toBe(host);
    undo();
    expect(global.wx).toBe('before');
    delete global.wx;
    host.install()();
    expect('wx' in globalThis).toBe(false);
  });
});
