// Host-specific mappings of the mini-program transport, each against an emulated host over real HTTP.
import { HOST_NAMES } from '../../../src/transports/miniprogram/host-globals.js';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { AbortError, ConfigError, createCancelToken, createClient, NetworkError, TimeoutError, UnauthorizedError } from '../../../src/miniprogram.js';
import type { HostRequestOptions } from '../../../src/miniprogram.js';
import { makeJwt, startFakeService, type FakeService } from '../../helpers/fake-service.js';
import { sendJson, startServer } from '../../helpers/server.js';
import { createHost, type HostKind, type HostQuirks } from '../../helpers/hosts.js';

let service: FakeService;
afterEach(async () => {
  await service?.close();
  for (const kind of HOST_NAMES) delete (globalThis as Record<string, unknown>)[kind];
});

async function setup(kind: HostKind = 'wx', quirks: HostQuirks = {}, options: object = {}) {
  const host = createHost(kind, quirks);
  const client = createClient({ baseUrl: service.url, tokenProvider: () => service.issue(), request: host.request, retry: { delay: () => 1 }, ...options });
  return { host, client };
}

describe('what the transport sends', () => {
  test('both header and headers, the body as a string, raw text asked for, the host timeout capped at 60 s', async () => {
    service = await startFakeService();
    const { host, client } = await setup('wx', {}, { timeout: 90_000 });
    await client.post('/x', { json: { a: '快' }, headers: { 'x-app': '1' } });
    const sent = host.calls[0];
    expect(sent.header).toBe(sent.headers);
    expect(sent.header).toMatchObject({ 'x-app': '1', 'content-type': 'application/json', authorization: 'Bearer ' + service.issued[0] });
    expect(sent.data).toBe('{"a":"快"}');
    expect(sent.dataType).toBe('text');
    expect(sent.responseType).toBe('text');
    expect(sent.timeout).toBe(60_000);
    expect(sent.method).toBe('POST');
  });

  test("Douyin and Baidu get dataType 'string' (their only raw type)", async () => {
    service = await startFakeService();
    for (const kind of ['tt', 'swan'] as const) {
      const host = createHost(kind);
      (globalThis as Record<string, unknown>)[kind] = host;
      const client = createClient({ baseUrl: service.url, tokenProvider: () => service.issue() });
      await client.get('/x');
      expect(host.calls[0].dataType).toBe('string');
      delete (globalThis as Record<string, unknown>)[kind];
    }
  });

  test('Alipay (older base library reads only `headers`) still gets Authorization', async () => {
    service = await startFakeService();
    const { client } = await setup('my');
    await client.get('/x');
    expect(service.hits[0].token).toBe(service.issued[0]);
  });

  test('GET sends no data; the query is built by the SDK', async () => {
    service = await startFakeService();
    const { host, client } = await setup();
    await client.get('/x', { searchParams: { q: 'a b', n: 1 } });
    expect(host.calls[0].data).toBeUndefined();
    expect(host.calls[0].url).toBe(service.url + '/x?q=a%20b&n=1');
  });
});

describe('WeChat family fail mapping', () => {
  test('request:fail timeout -> TimeoutError (retried for GET)', async () => {
    service = await startFakeService();
    const { host, client } = await setup('wx', {}, { retry: 0 });
    host.failNextWith({ errMsg: 'request:fail timeout', errno: 5 });
    await expect(client.get('/x')).rejects.toBeInstanceOf(TimeoutError);
  });

  test('request:fail abort (not ours) -> AbortError, not retried', async () => {
    service = await startFakeService();
    const { host, client } = await setup();
    host.failNextWith({ errMsg: 'request:fail abort', errno: 1 });
    await expect(client.get('/x')).rejects.toBeInstanceOf(AbortError);
    expect(host.calls).toHaveLength(1);
  });

  test('interrupted (app in background) -> a retryable NetworkError: the GET succeeds on retry', async () => {
    service = await startFakeService();
    const { host, client } = await setup();
    host.interruptNext();
    await expect(client.get('/x')).resolves.toMatchObject({ path: '/x' });
    expect(host.calls).toHaveLength(2);
  });

  test('other failures -> NetworkError keeping errMsg and errno', async () => {
    service = await startFakeService();
    const { host, client } = await setup('wx', {}, { retry: 0 });
    host.failNextWith({ errMsg: 'request:fail net::ERR_CONNECTION_RESET', errno: 600001 });
    const error = (await client.get('/x').catch((e: unknown) => e)) as NetworkError;
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.errMsg).toBe('request:fail net::ERR_CONNECTION_RESET');
    expect(error.errno).toBe(600001);
  });

  test('a domain outside the allow-list -> ConfigError saying what to do, not retried', async () => {
    service = await startFakeService();
    const { host, client } = await setup('wx', { allowedOrigins: ['https://api.example.com'] });
    const error = await client.get('/x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/not an allowed request domain.*allow-list in the mini-program console/);
    expect(host.calls).toHaveLength(1);
  });

  test('PC WeChat: a 401 in fail drives the refresh like a 401 in success', async () => {
    service = await startFakeService();
    const { client } = await setup('wx', { http401InFail: true });
    await client.get('/warm');
    service.expireAll();
    await expect(client.get('/x')).resolves.toMatchObject({ path: '/x' });
    expect(service.issued).toHaveLength(2);
  });

  test('Retry-After is read whatever the header key case or shape (mixed, DingTalk arrays)', async () => {
    service = await startFakeService();
    for (const headerShape of ['mixed', 'array', 'lower'] as const) {
      const { client } = await setup('wx', { headerShape }, { retry: { limit: 1, delay: () => 5000 } });
      const started = Date.now();
      await expect(client.get('/status/503')).rejects.toMatchObject({ status: 503 });
      expect(Date.now() - started).toBeLessThan(2000); // Retry-After: 0 honoured, not the 5 s delay
    }
  });
});

describe('Alipay mapping', () => {
  test('error 19 with status 401 drives the refresh (not "aborted", the popular adapter bug)', async () => {
    service = await startFakeService();
    const { client } = await setup('my');
    await client.get('/warm');
    service.expireAll();
    await expect(client.post('/x', { json: { n: 1 } })).resolves.toMatchObject({ body: '{"n":1}' });
    service.rejectAll(true);
    await expect(client.get('/x')).rejects.toBeInstanceOf(UnauthorizedError);
  });

  test('error 19 with 404/500 -> HttpError with the status', async () => {
    service = await startFakeService();
    const { client } = await setup('my', {}, { retry: 0 });
    await expect(client.get('/status/404')).rejects.toMatchObject({ code: 'HTTP_ERROR', status: 404 });
    await expect(client.get('/status/500')).rejects.toMatchObject({ code: 'HTTP_ERROR', status: 500 });
  });

  test('error 14 cannot happen: text is asked for, and a non-JSON body is a ResponseError', async () => {
    service = await startFakeService();
    const { client } = await setup('my');
    await expect(client.get('/text')).rejects.toMatchObject({ code: 'RESPONSE_ERROR' });
  });

  test('error 13 -> TimeoutError, error 9 -> AbortError, error 12 -> NetworkError', async () => {
    service = await startFakeService();
    const { host, client } = await setup('my', {}, { retry: 0 });
    host.failNextWith({ error: 13, errorMessage: 'request:fail timeout' });
    await expect(client.get('/x')).rejects.toBeInstanceOf(TimeoutError);
    host.failNextWith({ error: 9, errorMessage: 'request:fail abort' });
    await expect(client.get('/x')).rejects.toBeInstanceOf(AbortError);
    host.failNextWith({ error: 12, errorMessage: 'network error' });
    await expect(client.get('/x')).rejects.toMatchObject({ code: 'NETWORK_ERROR', errno: 12 });
  });
});

describe('settles exactly once', () => {
  test.each([
    ['a duplicate opposite callback', { doubleCallback: true }],
    ['complete before success', { completeFirst: true }],
  ] as const)('%s: one result, and the queue slot is released once', async (_label, quirks) => {
    service = await startFakeService();
    const { client } = await setup('wx', quirks, { concurrency: 1 });
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => client.get('/n/' + i)));
    expect(results.map((r) => (r as { path: string }).path)).toEqual(Array.from({ length: 12 }, (_, i) => '/n/' + i));
    await new Promise((r) => setTimeout(r, 20)); // late duplicates arrive and are ignored
    await expect(client.get('/after')).resolves.toBeTruthy();
  });

  test('a host that never calls back is ended by the timer backstop, and its task aborted', async () => {
    service = await startFakeService();
    const { host, client } = await setup('wx', { neverCallBack: true }, { timeout: 60, retry: 0 });
    await expect(client.get('/x')).rejects.toBeInstanceOf(TimeoutError);
    expect(host.aborted).toBe(1);
  });

  // #11.7: the answer is read before the request counts as settled, so a broken one cannot
  // clear the backstop and then throw into the host's callback.
  test.each([
    ['success(undefined)', undefined],
    ['success(null)', null],
    ['success with header: [null] and no status', { header: [null], data: '' }],
    ['success with statusCode 0', { statusCode: 0, header: {}, data: '' }],
  ])('a host calling %s: the request settles with a NetworkError naming the bad answer, within timeout', async (_label, answer) => {
    service = await startFakeService();
    const client = createClient({
      baseUrl: service.url,
      tokenProvider: () => service.issue(),
      retry: 0,
      timeout: 5000,
      request: (options: HostRequestOptions) => setTimeout(() => options.success(answer as never), 1),
    });
    const error = await client.get('/x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as Error).message).toMatch(/the host answered success\(\) with something that is not a response/);
  });

  test("a tokenProvider that rejects with the host's fail object: the message shows its errMsg", async () => {
    service = await startFakeService();
    const client = createClient({
      baseUrl: service.url,
      request: createHost('wx').request,
      tokenProvider: () => Promise.reject({ errMsg: 'request:fail url not in domain list', errno: 600002 }),
    });
    await expect(client.get('/x')).rejects.toThrow(/tokenProvider threw: request:fail url not in domain list/);
  });

  test('header: [null, {...}] in a real answer is read, the null skipped', async () => {
    service = await startFakeService();
    const client = createClient({
      baseUrl: service.url,
      tokenProvider: () => service.issue(),
      request: (options: HostRequestOptions) =>
        setTimeout(() => options.success({ statusCode: 200, header: [null, { 'Content-Type': 'application/json' }], data: '{"code":0,"data":7}' } as never), 1),
    });
    await expect(client.get('/x')).resolves.toBe(7);
  });

  test('a host request() that throws -> NetworkError', async () => {
    service = await startFakeService();
    const client = createClient({
      baseUrl: service.url,
      tokenProvider: () => service.issue(),
      retry: 0,
      request: () => {
        throw new Error('invalid parameter');
      },
    });
    await expect(client.get('/x')).rejects.toThrow(/the host request\(\) threw: invalid parameter/);
  });
});

describe('concurrency queue', () => {
  test("50 at once: all succeed, never more than 9 in flight (one of WeChat's 10 kept for the tokenProvider)", async () => {
    service = await startFakeService();
    const { host, client } = await setup('wx');
    await Promise.all(Array.from({ length: 50 }, (_, i) => client.get('/q/' + i)));
    expect(host.maxSeen).toBe(9);
    expect(service.hits).toHaveLength(50);
  });

  test('the limit is configurable', async () => {
    service = await startFakeService();
    const { host, client } = await setup('wx', {}, { concurrency: 3 });
    await Promise.all(Array.from({ length: 20 }, (_, i) => client.get('/q/' + i)));
    expect(host.maxSeen).toBe(2);
    expect(() => createClient({ baseUrl: service.url, tokenProvider: () => '', request: host.request, concurrency: 0 })).toThrow(ConfigError);
  });

  test('10,000 requests aborted while queued settle at once and leave the queue usable (O(1) removal)', async () => {
    service = await startFakeService();
    const { host, client } = await setup('wx', {}, { concurrency: 1 });
    const cancel = createCancelToken();
    const first = client.get('/slow/50');
    const queued = Array.from({ length: 10_000 }, (_, i) => client.get('/q/' + i, { signal: cancel.signal }));
    await new Promise((r) => setTimeout(r, 10));
    cancel.cancel('left');
    const results = await Promise.allSettled(queued);
    expect(results.filter((r) => r.status === 'rejected' && (r.reason as { code: string }).code === 'ABORTED')).toHaveLength(10_000);
    await first;
    await expect(client.get('/after')).resolves.toBeTruthy();
    expect(host.calls.map((c) => new URL(c.url).pathname)).toEqual(['/slow/50', '/after']);
  });

  test('a request queued by the host limit when clearToken() runs is never sent, with any token (found by the model test)', async () => {
    service = await startFakeService();
    const { host, client } = await setup('wx', {}, { concurrency: 1 });
    const first = client.get('/slow/100').catch((e: unknown) => e);
    const queued = client.get('/queued').catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 20));
    client.clearToken();
    expect(await queued).toMatchObject({ code: 'ABORTED' });
    expect(await first).toMatchObject({ code: 'ABORTED' });
    await new Promise((r) => setTimeout(r, 150));
    expect(host.calls.map((c) => new URL(c.url).pathname)).toEqual(['/slow/100']);
  });

  test("a request queued by the host limit leaves with the token the client holds then, not one the server's clock ended meanwhile (found by the model test)", async () => {
    service = await startFakeService();
    // A backend cache hands out a token already past its end (950 s old, 900 s life): the client
    // cannot tell until an answer's Date shows the server's clock.
    const provider = vi.fn<(o: { forceRefresh: boolean }) => string>(({ forceRefresh }) => (forceRefresh ? service.issue() : service.issue('user-1', 950)));
    const host = createHost('wx');
    const client = createClient({ baseUrl: service.url, tokenProvider: provider, request: host.request, concurrency: 1 });
    const old = await client.getToken();
    // /a goes out, /b and /c wait for the slot. /b leaves as /a's 401 frees it (before the client
    // has read that answer); /c leaves after /b's, when the client knows the old token has ended.
    await Promise.all(['/a', '/b', '/c'].map((path) => client.get(path)));
    const fresh = service.issued[1];
    expect(service.hits.filter((h) => h.path === '/c').map((h) => (h.token === old ? 'old' : h.token === fresh ? 'fresh' : 'other'))).toEqual(['fresh']);
    expect(provider.mock.calls.map(([o]) => o.forceRefresh)).toEqual([false, true]);
  });

  test('a 401 on the token a queued request took as it left forces a refresh: the loop knows which token that attempt carried', async () => {
    service = await startFakeService();
    const now = Math.floor(Date.now() / 1000);
    // The second token is one the service never issued: it answers 401 to it.
    const answers = [() => service.issue(), () => makeJwt({ sub: 'user-1', iat: now, exp: now + 900 }), () => service.issue()];
    const provider = vi.fn<(o: { forceRefresh: boolean }) => string>(() => (answers.shift() as () => string)());
    const host = createHost('wx');
    const client = createClient({ baseUrl: service.url, tokenProvider: provider, request: host.request, concurrency: 1 });
    await client.getToken();
    // /slow takes the slot; /b waits. A manual refresh meanwhile: /b leaves with that newer token.
    const slow = client.get('/slow/50');
    const queued = client.get('/b');
    const taken = await client.getToken({ forceRefresh: true });
    await slow;
    await expect(queued).resolves.toBeTruthy();
    const b = service.hits.filter((h) => h.path === '/b');
    expect(b.map((h) => [h.token === taken ? 'taken as it left' : 'a newer one', h.status])).toEqual([
      ['taken as it left', 401],
      ['a newer one', 200],
    ]);
    // Believing it had sent the token held when it was queued, the loop would replay with the very
    // token just rejected, without a forced call, and fail.
    expect(provider.mock.calls.map(([o]) => o.forceRefresh)).toEqual([false, true, true]);
  });

  test('a request that left the queue and waits for its new token is fenced by clearToken(): never sent, its slot given back', async () => {
    service = await startFakeService();
    let release = () => {};
    const forced = new Promise<void>((resolve) => (release = resolve));
    const provider = vi.fn<(o: { forceRefresh: boolean }) => string | Promise<string>>(({ forceRefresh }) =>
      forceRefresh ? forced.then(() => service.issue()) : service.issue('user-1', 950),
    );
    const host = createHost('wx');
    const client = createClient({ baseUrl: service.url, tokenProvider: provider, request: host.request, concurrency: 1 });
    await client.getToken();
    let rejected = 0;
    const bothRejected = new Promise<void>((resolve) => client.on('unauthorized', () => void (++rejected === 2 && resolve())));
    // /a and /b are answered 401 (the token ended) and wait for the forced call; /c leaves the
    // queue as /b's answer comes (before the client reads it), knows the token ended, and waits too.
    const calls = ['/a', '/b', '/c'].map((path) => client.get(path).catch((e: unknown) => e));
    await bothRejected;
    client.clearToken();
    expect(await Promise.all(calls)).toMatchObject([{ code: 'ABORTED' }, { code: 'ABORTED' }, { code: 'ABORTED' }]);
    release();
    await client.get('/d');
    expect(service.hits.map((h) => [h.path, h.status])).toEqual([
      ['/a', 401],
      ['/b', 401],
      ['/d', 200],
    ]);
  });

  test('a request aborted while queued is never sent', async () => {
    service = await startFakeService();
    const { host, client } = await setup('wx', {}, { concurrency: 1 });
    const cancel = createCancelToken();
    const first = client.get('/slow/100');
    const queued = client.get('/queued', { signal: cancel.signal });
    await new Promise((r) => setTimeout(r, 20));
    cancel.cancel('user left');
    await expect(queued).rejects.toMatchObject({ code: 'ABORTED', cause: 'user left' });
    await first;
    expect(host.calls.map((c) => new URL(c.url).pathname)).toEqual(['/slow/100']);
  });
});

describe('cancelling', () => {
  test('createCancelToken aborts an in-flight request through RequestTask.abort()', async () => {
    service = await startFakeService();
    const { host, client } = await setup();
    const cancel = createCancelToken();
    const pending = client.get('/slow/500', { signal: cancel.signal });
    await new Promise((r) => setTimeout(r, 50));
    cancel.cancel();
    await expect(pending).rejects.toBeInstanceOf(AbortError);
    expect(host.aborted).toBe(1);
  });

  test('a real AbortSignal works too', async () => {
    service = await startFakeService();
    const { host, client } = await setup('my');
    const controller = new AbortController();
    const pending = client.get('/slow/500', { signal: controller.signal });
    await new Promise((r) => setTimeout(r, 50));
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(AbortError);
    expect(host.aborted).toBe(1);
  });
});

describe('host detection', () => {
  test('without `request`, the first host global found is used', async () => {
    service = await startFakeService();
    const my = createHost('my');
    (globalThis as Record<string, unknown>).my = my;
    const client = createClient({ baseUrl: service.url, tokenProvider: () => service.issue() });
    await client.get('/x');
    expect(my.calls).toHaveLength(1);
    expect(my.calls[0].dataType).toBe('text');
  });

  test('no host at all -> ConfigError naming the hosts looked for', () => {
    expect(() => createClient({ baseUrl: 'https://api.example.com', tokenProvider: () => '' })).toThrow(
      /no mini-program request\(\) found: looked for wx, my, tt, swan, qq, uni, Taro; pass request/,
    );
    expect(() => createClient({ baseUrl: 'https://api.example.com', tokenProvider: () => '', request: 'wx.request' as never })).toThrow(
      /request must be the host request function/,
    );
  });
});

/**
 * Issue #29 item 10: WeChat runs at most 10 requests at once and queues the rest (the emulation
 * does so too). A tokenProvider that asks the partner's token route with `wx.request` must not
 * wait behind the SDK's own slow requests until tokenTimeout: the SDK keeps one of the host's
 * slots free for it.
 */
describe("a refresh is never starved by the SDK's own traffic (#29 item 10)", () => {
  test.each(['wx', 'qq'] as HostKind[])(
    '%s: 10 requests held open by the service, then a 401: the forced provider call over the same host gets its answer at once',
    async (kind) => {
      let open = () => {};
      const opened = new Promise<void>((resolve) => (open = resolve));
      let held = 0;
      const server = await startServer(async (req, res) => {
        if (req.url === '/token')
          return sendJson(res, 200, { token: makeJwt({ sub: 'user-1', iat: Math.floor(Date.now() / 1000), exp: Math.floor(Date.now() / 1000) + 900 }) });
        if (req.url === '/unauthorized') return sendJson(res, 401, { error: 'token rejected' });
        held++;
        await opened;
        sendJson(res, 200, { code: 0, data: { path: req.url } });
      });
      try {
        const host = createHost(kind);
        const forced: boolean[] = [];
        // The README's mini-program provider: the partner's token route over the host's request().
        const tokenProvider = ({ forceRefresh }: { forceRefresh: boolean }) =>
          new Promise<string>((resolve, reject) => {
            forced.push(forceRefresh);
            host.request({
              url: server.url + '/token',
              method: 'GET',
              header: {},
              headers: {},
              dataType: 'json',
              responseType: 'text',
              timeout: 60_000,
              success: (r) => resolve((r.data as { token: string }).token),
              fail: reject,
            });
          });
        // tokenTimeout is the slack: on the old code the provider's request waited behind the held ones until it ran out.
        const client = createClient({ baseUrl: server.url, tokenProvider, request: host.request, tokenTimeout: 5000 });
        await client.getToken();
        const refreshed = new Promise<string>((resolve) => {
          client.on('token', (e) => e.reason === 'unauthorized' && resolve('refreshed'));
          client.on('token:error', (e) => resolve('provider failed: ' + e.error.message));
        });
        const rejected = client.get('/unauthorized').catch((e: unknown) => e);
        const slow = Array.from({ length: 10 }, (_, i) => client.get('/held/' + i).catch((e: unknown) => e));
        // While the 10 are held: the forced call has its token (its request took the kept slot).
        expect(await refreshed).toBe('refreshed');
        expect(forced).toEqual([false, true]);
        expect(host.maxSeen).toBe(10);
        open();
        // The replay waited in the SDK's queue like any request; the route's 401 stands.
        expect(await rejected).toBeInstanceOf(UnauthorizedError);
        expect(await Promise.all(slow)).toEqual(Array.from({ length: 10 }, (_, i) => ({ path: '/held/' + i })));
        expect(held).toBe(10);
      } finally {
        open();
        await server.close();
      }
    },
  );
});
