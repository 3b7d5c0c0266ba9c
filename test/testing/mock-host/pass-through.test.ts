// @vitest-environment node
/**
 * createMockHost({ passThrough }) (issue #46 item 4): the calls to those origins go over real
 * HTTP, to a real sandbox and a real token route (createTokenRoute over createTokenExchange), and
 * the host's own rules still hold: WeChat's callback shapes, status in success, header case,
 * Alipay's HTTP errors in fail, the limit of calls in flight, abort and timeout dropping the
 * connection, a refused connection failing as the host fails it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import { createClient, hostTokenStore } from '../../../src/miniprogram.js';
import { ConfigError } from '../../../src/errors/index.js';
import { createTokenExchange, createTokenRoute, toNodeHandler } from '../../../src/server-node.js';
import { createMockHost, SANDBOX_PATHS, startSandbox, type MockHost, type MockHostOptions, type Sandbox } from '../../../src/testing.js';

let sandbox: Sandbox;
let backend: Server;
let backendUrl: string;
/** The token route's requests, as the backend saw them. */
const routeCalls: string[] = [];

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<[Server, string]> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return [server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`];
}

beforeAll(async () => {
  sandbox = await startSandbox();
  const exchange = createTokenExchange({ baseUrl: sandbox.url, ...sandbox.credentials });
  const route = toNodeHandler(
    createTokenRoute({ exchange, resolveUser: (req: IncomingMessage) => (req.headers['x-session'] === 'demo-session' ? 'user-1' : undefined) }),
  );
  [backend, backendUrl] = await listen((req, res) => {
    routeCalls.push(req.url ?? '');
    void route(req, res);
  });
});
afterAll(async () => {
  backend?.closeAllConnections();
  backend?.close();
  await sandbox?.close();
});
const uninstall: Array<() => void> = [];
afterEach(() => uninstall.splice(0).forEach((undo) => undo()));

/** A page's client on a host that passes the sandbox and the backend through, as the quick starts' pages ask. */
function page(options: MockHostOptions = {}) {
  const host = createMockHost({ passThrough: [sandbox.url, backendUrl], ...options });
  uninstall.push(host.install());
  const wx = host as MockHost & { request(o: object): unknown };
  const client = createClient({
    baseUrl: sandbox.url,
    tokenProvider: ({ forceRefresh, rejected }) =>
      new Promise<string>((resolve, reject) =>
        wx.request({
          url: backendUrl + '/channel-token' + (forceRefresh ? '?force=1&rejected=' + (rejected || '') : ''),
          header: { 'x-session': 'demo-session' },
          success: (r: { statusCode: number; data: { access_token: string } }) =>
            r.statusCode === 200 ? resolve(r.data.access_token) : reject(new Error('token route answered ' + r.statusCode)),
          fail: (e: { errMsg: string }) => reject(new Error(e.errMsg)),
        }),
      ),
    tokenStore: hostTokenStore({ key: () => 'user-1' }),
  });
  return { host, client };
}

describe('passThrough: the real sandbox and the real token route', () => {
  test('the orders; after the sandbox expires every token (twice, within 5 s), one 401, one forced refresh naming the rejected token, one replay', async () => {
    const { host, client } = page();
    const before = sandbox.stats.unauthorized;
    routeCalls.length = 0;
    expect((await client.get<{ orders: Array<{ order_no: string }> }>(SANDBOX_PATHS.orders)).orders.map((o) => o.order_no)).toEqual([
      'SO20240601001',
      'SO20240602002',
    ]);
    for (let round = 0; round < 2; round++) {
      sandbox.expireTokens();
      expect((await client.get<{ orders: unknown[] }>(SANDBOX_PATHS.orders)).orders).toHaveLength(2);
    }
    expect(routeCalls).toEqual([
      '/channel-token',
      expect.stringMatching(/^\/channel-token\?force=1&rejected=\w+$/),
      expect.stringMatching(/^\/channel-token\?force=1&rejected=\w+$/),
    ]);
    expect(sandbox.stats.unauthorized - before).toBe(2);
    expect(host.stats).toMatchObject({ requests: 8, tokenRouteCalls: 3, forcedRefreshes: 2, unauthorized: 0, dataCalls: 0 });
    expect(host.calls.filter((c) => c.url.startsWith(sandbox.url)).map((c) => c.status)).toEqual([200, 401, 200, 401, 200]);
    // The sandbox's tokens are numbered: the calls say which one each carried.
    expect(host.calls.every((c) => c.url.startsWith(backendUrl) || typeof c.token === 'number')).toBe(true);
  });

  test('files: an upload from host.files reaches the sandbox intact over multipart, the download comes back into host.files', async () => {
    const { host, client } = page();
    const bytes = new Uint8Array(Array.from({ length: 120_000 }, (_, i) => (i * 13) & 255));
    host.files.set('wxfile://tmp_photo.jpg', bytes);
    const photo = await client.upload<{ url: string; size: number; field: string; file_name: string; fields: object }>(SANDBOX_PATHS.photos, {
      filePath: 'wxfile://tmp_photo.jpg',
      name: 'file',
      formData: { order_no: 'SO20240601001' },
    });
    expect(photo).toMatchObject({ url: expect.stringMatching(new RegExp('^' + sandbox.url)), size: 120_000, field: 'file', file_name: 'tmp_photo.jpg' });
    expect(photo.fields).toEqual({ order_no: 'SO20240601001' });
    sandbox.expireTokens();
    const { tempFilePath } = await client.download(photo.url);
    expect(host.files.get(tempFilePath)).toEqual(bytes);
    const invoice = await client.download('/open/api/v1/sdk/invoices/SO20240601001', { filePath: 'wxfile://usr/invoice.pdf' });
    expect(Buffer.from(host.files.get(invoice.filePath as string) ?? []).toString('latin1')).toMatch(/^%PDF-1\.4\n[\s\S]*%%EOF\n$/);
  });
});

describe("passThrough: the host's own rules over real HTTP", () => {
  let slow: Server;
  let slowUrl: string;
  const closed: string[] = [];
  /** The requests the server got, in order. */
  const arrived: string[] = [];
  beforeAll(async () => {
    [slow, slowUrl] = await listen((req, res) => {
      arrived.push(req.url ?? '');
      req.on('close', () => closed.push(req.url ?? ''));
      // Never answered: only the host's abort or timeout ends them (an answer would close them too).
      if (req.url === '/held-aborted' || req.url === '/held-timeout') return;
      if (req.url?.startsWith('/slow')) return void setTimeout(() => res.writeHead(200, { 'content-type': 'text/plain' }).end('late'), 300);
      if (req.url === '/cut') return void (res.writeHead(200, { 'content-length': '100' }).write('{"partial":'), setTimeout(() => res.destroy(), 20));
      if (req.url === '/missing') return void res.writeHead(404, { 'content-type': 'application/json', 'x-trace-id': 'abc' }).end('{"error":"none"}');
      res
        .writeHead(200, { 'content-type': 'application/json', 'retry-after': '1' })
        .end(JSON.stringify({ method: req.method, type: req.headers['content-type'] ?? null }));
    });
  });
  afterAll(() => {
    slow?.closeAllConnections();
    slow?.close();
  });

  /** One wx.request: the callback it got, and what. */
  const call = (host: MockHost, options: object) =>
    new Promise<{ via: string; result: Record<string, unknown> }>((resolve) => {
      const task = host.request({
        ...options,
        success: (result: Record<string, unknown>) => resolve({ via: 'success', result }),
        fail: (result: Record<string, unknown>) => resolve({ via: 'fail', result }),
      });
      const { abortWhen } = options as { abortWhen?: () => Promise<unknown> };
      if (abortWhen) void abortWhen().then(() => (task as { abort(): void }).abort());
    });

  test("WeChat: every status in success, the server's headers capitalised, WeChat's default content-type, the JSON parsed", async () => {
    const host = createMockHost({ passThrough: [slowUrl] });
    expect(await call(host, { url: slowUrl + '/echo', method: 'POST', data: { a: 1 } })).toEqual({
      via: 'success',
      result: {
        statusCode: 200,
        data: { method: 'POST', type: 'application/json' },
        header: expect.objectContaining({ 'Retry-After': '1' }),
        errMsg: 'request:ok',
      },
    });
    expect(await call(host, { url: slowUrl + '/missing' })).toMatchObject({ via: 'success', result: { statusCode: 404, header: { 'X-Trace-Id': 'abc' } } });
  });

  test('Alipay: an HTTP error in fail with error 19, the headers lower case; a route of yours still comes first', async () => {
    const host = createMockHost({ kind: 'my', passThrough: [slowUrl], routes: { [`GET ${slowUrl}/echo`]: () => ({ body: { mine: true } }) } });
    expect(await call(host, { url: slowUrl + '/missing' })).toMatchObject({
      via: 'fail',
      result: { error: 19, status: 404, headers: { 'x-trace-id': 'abc' } },
    });
    expect(await call(host, { url: slowUrl + '/echo' })).toMatchObject({ via: 'success', result: { data: { mine: true } } });
  });

  test('the 11th call in flight fails as WeChat fails it; abort and timeout drop the connection; a refused connection is a network failure', async () => {
    const host = createMockHost({ passThrough: [slowUrl, 'http://127.0.0.1:1'] });
    const eleven = await Promise.all(Array.from({ length: 11 }, (_, i) => call(host, { url: `${slowUrl}/slow-${i}` })));
    expect(eleven.filter((r) => r.via === 'success')).toHaveLength(10);
    expect(eleven.find((r) => r.via === 'fail')?.result).toEqual({ errMsg: 'request:fail exceed max task count', errno: 600000 });
    closed.length = 0;
    arrived.length = 0;
    // No clock in the outcome (a busy machine may take more than 50 ms to connect): the abort
    // comes once the server has the request, and the connections are awaited, not slept for.
    const arrival = (url: string) => vi.waitFor(() => expect(arrived).toContain(url), { timeout: 10_000 });
    const aborted = await call(host, { url: slowUrl + '/held-aborted', abortWhen: () => arrival('/held-aborted') });
    const timedOut = await call(host, { url: slowUrl + '/held-timeout', timeout: 50 });
    expect([aborted, timedOut]).toEqual([
      { via: 'fail', result: { errMsg: 'request:fail abort', errno: 1 } },
      { via: 'fail', result: { errMsg: 'request:fail timeout', errno: 5 } },
    ]);
    // Every connection the server got for them is dropped (never answered, one left open would stay
    // open); the timed-out one may have been dropped before it reached the server.
    await vi.waitFor(() => expect(closed.toSorted()).toEqual(arrived.toSorted()), { timeout: 10_000 });
    expect(closed).toContain('/held-aborted');
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {}); // said below
    expect(await call(host, { url: 'http://127.0.0.1:1/x' })).toEqual({
      via: 'fail',
      result: { errMsg: 'request:fail ECONNREFUSED (passThrough: GET http://127.0.0.1:1)', errno: 600001 },
    });
    warn.mockRestore();
    expect(host.calls.at(-1)).toMatchObject({ failure: 'network' });
  });

  test('a body cut mid-way fails as an interrupted call; allowedOrigins still refuses an origin passed through', async () => {
    const host = createMockHost({ passThrough: [slowUrl], allowedOrigins: ['https://channel.example.com'] });
    expect(await call(host, { url: slowUrl + '/echo' })).toEqual({ via: 'fail', result: { errMsg: 'request:fail url not in domain list', errno: 600002 } });
    const open = createMockHost({ passThrough: [slowUrl] });
    expect(await call(open, { url: slowUrl + '/cut' })).toEqual({ via: 'fail', result: { errMsg: 'request:fail interrupted', errno: 600003 } });
  });

  test('nothing listening at a passThrough origin: the host says once, on stderr, to start it (a page shows only a code)', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      // What a page test run without the sandbox and the backend meets: its page shows [] and a code.
      const host = createMockHost({ passThrough: ['http://127.0.0.1:1', 'http://127.0.0.1:2'] });
      for (const url of ['http://127.0.0.1:1/a', 'http://127.0.0.1:1/b', 'http://127.0.0.1:2/channel-token'])
        expect(await call(host, { url })).toMatchObject({ via: 'fail', result: { errno: 600001 } });
      expect(warn.mock.calls.map((args) => String(args[0]))).toEqual([
        expect.stringMatching(/^\[channel-sdk\] createMockHost: nothing listens at http:\/\/127\.0\.0\.1:1 .*start it before the test/),
        expect.stringMatching(/nothing listens at http:\/\/127\.0\.0\.1:2 .*or leave it out of passThrough/),
      ]);
    } finally {
      warn.mockRestore();
    }
  });

  test('passThrough takes origins only, said with an example', () => {
    for (const bad of ['http://127.0.0.1:8787', ['http://127.0.0.1:8787/path'], ['127.0.0.1:8787'], [8787]])
      expect(() => createMockHost({ passThrough: bad as string[] })).toThrow(ConfigError);
    expect(() => createMockHost({ passThrough: ['http://127.0.0.1:8787/path'] })).toThrow(/is not an origin .*e\.g\. \['http:\/\/127\.0\.0\.1:8787'/);
    expect(() => createMockHost({ passthrough: [] } as MockHostOptions)).toThrow(/did you mean "passThrough"/);
  });
});
