// client.hostRequest (issue #32): wx.request's contract, with the token engine underneath, against
// the emulated hosts over real HTTP (test/helpers/hosts.ts).
import { afterEach, describe, expect, test, vi } from 'vitest';
import {
  AbortError,
  ConfigError,
  createClient,
  isRetryable,
  NetworkError,
  type HostRequestCall,
  type HostRequestError,
  type HostRequestResult,
} from '../../../src/miniprogram.js';
import { providerFor } from '../../conformance/suite.js';
import { startFakeService, type FakeService } from '../../helpers/fake-service.js';
import { createHost, type HostKind, type HostQuirks } from '../../helpers/hosts.js';
import { captureTimerThrows } from '../../helpers/uncaught.js';

let service: FakeService;
afterEach(async () => {
  await service?.close();
});

interface Echo {
  code: number;
  data: { method: string; path: string; body: string };
}

async function setup(kind: HostKind = 'wx', quirks: HostQuirks = {}, options: object = {}) {
  service = await startFakeService();
  const host = createHost(kind, quirks);
  const provider = providerFor(service, 5);
  const client = createClient({ baseUrl: service.url, tokenProvider: provider, request: host.request, ...options });
  return { host, client, provider };
}

/** One hostRequest with callbacks, as mini-program code writes it: what each callback received, in order. */
function call(client: ReturnType<typeof createClient>, options: HostRequestCall) {
  const seen: Array<[string, unknown]> = [];
  let task!: ReturnType<typeof client.hostRequest>;
  const done = new Promise<Array<[string, unknown]>>((resolve) => {
    const callbacks: Pick<HostRequestCall, 'success' | 'fail' | 'complete'> = {
      success: (r) => seen.push(['success', r]),
      fail: (e) => seen.push(['fail', e]),
      complete: (r) => (seen.push(['complete', r]), resolve(seen)),
    };
    task = client.hostRequest({ ...options, ...callbacks });
  });
  return { task, done };
}

describe('client.hostRequest: wx.request semantics', () => {
  test('success then complete with statusCode, header and data parsed as JSON; the Bearer on the wire, the caller’s headers kept', async () => {
    const { client, host } = await setup();
    const { done } = call(client, { url: '/orders?x=1', header: { 'x-app': '1' } });
    const seen = await done;
    expect(seen.map(([name]) => name)).toEqual(['success', 'complete']);
    const result = seen[0][1] as HostRequestResult<Echo>;
    expect(result.statusCode).toBe(200);
    expect(result.data).toMatchObject({ code: 0, data: { method: 'GET', path: '/orders?x=1' } });
    expect(Object.keys(result.header).map((k) => k.toLowerCase())).toContain('content-type');
    expect(seen[1][1]).toBe(result);
    expect(service.hits[0].token).toBe(service.issued[0]);
    expect(host.calls[0].header).toMatchObject({ 'x-app': '1' });
    // The caller's dataType: the host parses the body itself (the SDK's own calls ask for text).
    expect(host.calls[0].dataType).toBeUndefined();
  });

  test('HTTP 4xx and 5xx arrive in success, as the host gives them (and on Alipay, which fails them, too); no retries', async () => {
    for (const kind of ['wx', 'my'] as const) {
      const { client } = await setup(kind);
      const outcomes = await Promise.all(['/status/404', '/status/500', '/status/503'].map((url) => call(client, { url }).done));
      expect(outcomes.map((seen) => [seen[0][0], (seen[0][1] as HostRequestResult).statusCode])).toEqual([
        ['success', 404],
        ['success', 500],
        ['success', 503],
      ]);
      expect(service.hits).toHaveLength(3);
      await service.close();
    }
  });

  test("dataType 'text' leaves the body a string; responseType 'arraybuffer' gives the bytes; object data is sent as JSON and as a GET's query", async () => {
    const { client, host } = await setup();
    const text = await client.hostRequest<string>({ url: '/t', dataType: 'text' });
    expect(typeof text.data).toBe('string');
    expect(JSON.parse(text.data)).toMatchObject({ data: { path: '/t' } });
    const bytes = await client.hostRequest<ArrayBuffer>({ url: '/b', responseType: 'arraybuffer' });
    expect(bytes.data).toBeInstanceOf(ArrayBuffer);
    expect(JSON.parse(new TextDecoder().decode(bytes.data))).toMatchObject({ data: { path: '/b' } });
    const posted = await client.hostRequest<Echo>({ url: '/p', method: 'POST', data: { a: '快' } });
    expect(JSON.parse(posted.data.data.body)).toEqual({ a: '快' });
    const got = await client.hostRequest<Echo>({ url: '/g', data: { q: 'a b' } });
    expect(got.data.data.path).toBe('/g?q=a%20b');
    expect(host.calls.map((c) => [c.dataType, c.responseType])).toEqual([
      ['text', undefined],
      [undefined, 'arraybuffer'],
      [undefined, undefined],
      [undefined, undefined],
    ]);
  });

  test('the task is also a promise (Taro, uni without callbacks): it resolves to the result, rejects with the error and its errMsg', async () => {
    const { client, host } = await setup();
    const result = await client.hostRequest<Echo>({ url: '/promise' });
    expect([result.statusCode, result.data.data.path]).toEqual([200, '/promise']);
    host.interruptNext();
    const error = (await client.hostRequest({ url: '/lost' }).catch((e: unknown) => e)) as HostRequestError;
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.errMsg).toMatch(/^request:fail /);
    expect(isRetryable(error)).toBe(true);
  });

  test('over uni and Taro hosts: code that awaits request() awaits hostRequest the same way, a 401 replayed underneath', async () => {
    for (const kind of ['uni', 'Taro'] as const) {
      const { client, provider } = await setup(kind);
      await client.hostRequest({ url: '/warm' });
      service.expireAll();
      const result = await client.hostRequest<Echo>({ url: '/orders', method: 'POST', data: { kind } });
      expect([result.statusCode, JSON.parse(result.data.data.body)]).toEqual([200, { kind }]);
      expect(provider.forced()).toBe(1);
      await service.close();
    }
  });

  test('task.abort() on the wire: fail with "request:fail abort" (an AbortError), then complete; the host task is aborted', async () => {
    const { client, host } = await setup();
    const { task, done } = call(client, { url: '/slow/2000' });
    // On the wire: the host was called (the slow answer takes 2 s).
    await vi.waitFor(() => expect(host.calls).toHaveLength(1));
    task.abort();
    const seen = await done;
    expect(seen.map(([name]) => name)).toEqual(['fail', 'complete']);
    const error = seen[0][1] as HostRequestError;
    expect(error).toBeInstanceOf(AbortError);
    expect(error.errMsg).toBe('request:fail abort');
    expect(host.aborted).toBe(1);
    expect(isRetryable(error)).toBe(false);
  });

  test('#42 item 8: the task’s onHeadersReceived and onChunkReceived (enableChunked) forward the answer’s, never a replayed 401’s, and nothing after clearToken() or off', async () => {
    const { client, provider } = await setup();
    await client.hostRequest({ url: '/warm' });
    service.expireAll();
    const headers: Array<number | undefined> = [];
    let bytes = 0;
    const task = client.hostRequest({ url: '/download/8192', enableChunked: true, responseType: 'arraybuffer' });
    task.onHeadersReceived((h) => headers.push(h.statusCode));
    task.onChunkReceived(({ data }) => void (bytes += data.byteLength));
    expect((await task).statusCode).toBe(200);
    expect(provider.forced()).toBe(1);
    // The 401's headers and body went unheard: the replay's are the answer.
    expect([headers, bytes]).toEqual([[200], 8192]);
    // A listener removed hears nothing more; clearToken() while chunks arrive: none after it.
    const slow = client.hostRequest({ url: '/slow-download/1048576/10', enableChunked: true, responseType: 'arraybuffer' });
    const heard = { on: 0, off: 0, afterClear: 0 };
    let cleared = false;
    const removed = () => void heard.off++;
    slow.onChunkReceived(removed);
    slow.onChunkReceived(() => void (cleared ? heard.afterClear++ : heard.on++));
    slow.offChunkReceived(removed);
    while (heard.on < 3) await new Promise((r) => setTimeout(r, 10));
    client.clearToken();
    cleared = true;
    const error = (await slow.catch((e: unknown) => e)) as HostRequestError;
    await new Promise((r) => setTimeout(r, 100));
    expect([error.errMsg, heard.off, heard.afterClear]).toEqual(['request:fail abort', 0, 0]);
  });

  test('#42 item 8: a success (or fail) that throws: complete still runs, the throw surfaces as an uncaught error, no unhandled rejection', async () => {
    const { client } = await setup();
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    const completed: string[] = [];
    try {
      const uncaught = await captureTimerThrows(async (wait) => {
        for (const [url, callback] of [
          ['/ok', 'success'],
          ['https://evil.example/x', 'fail'],
        ] as const) {
          // complete, or 500 ms without it.
          await Promise.race([
            new Promise<void>((resolve) => {
              client.hostRequest({
                url,
                [callback]: () => {
                  throw new Error(callback + ' threw');
                },
                complete: () => (completed.push(url), resolve()),
              });
            }),
            wait(500),
          ]);
        }
        await wait(20);
      });
      expect(completed).toEqual(['/ok', 'https://evil.example/x']);
      expect(uncaught.map((e) => (e as Error).message)).toEqual(['success threw', 'fail threw']);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  test('#42 item 8: a task with success only whose caller awaits it (Taro, uni) or catches it: the failure reaches the caller alone, no unhandled rejection; left unheard, it still surfaces as one', async () => {
    const { client } = await setup();
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const caught: string[] = [];
      // Refused before it is sent, awaited in a try/catch.
      try {
        await client.hostRequest({ url: 'https://evil.example/x', success: () => {} });
      } catch (error) {
        caught.push((error as HostRequestError).errMsg.slice(0, 13));
      }
      // Aborted by the page (its onUnload), caught.
      const task = client.hostRequest({ url: '/slow/2000', success: () => {} });
      task.abort();
      await task.catch((error: HostRequestError) => caught.push(error.errMsg));
      await new Promise((r) => setTimeout(r, 50));
      expect(caught).toEqual(['request:fail ', 'request:fail abort']);
      // Before: both also came back as unhandled rejections, from the SDK's own chain of the callbacks.
      expect(unhandled).toEqual([]);
      // Nobody hears it (no fail, no complete, the task not awaited): not lost, an unhandled rejection.
      client.hostRequest({ url: 'https://evil.example/y', success: () => {} });
      await new Promise((r) => setTimeout(r, 50));
      expect(unhandled.map((e) => (e as HostRequestError).errMsg.slice(0, 13))).toEqual(['request:fail ']);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  test('refused before anything is sent, through fail: another origin, a path above baseUrl, Authorization in any case, a wrong type', async () => {
    const { client, host } = await setup();
    const cases: Array<[HostRequestCall, RegExp]> = [
      [{ url: 'https://evil.example/x' }, /refusing/],
      [{ url: '/../admin' }, /climbs above|refusing/],
      [{ url: '/x', header: { AUTHORIZATION: 'Bearer mine' } }, /authorization/i],
      [{ url: '/x', headers: { Authorization: 'Bearer mine' } }, /authorization/i],
      [{ url: 42 as unknown as string }, /url|path/i],
      [{ url: '/x', success: 'yes' as unknown as () => void }, /success must be a function/],
      [{ url: '/x', timeout: -1 }, /timeout/],
    ];
    const errors = await Promise.all(cases.map(([options]) => client.hostRequest(options).catch((e: unknown) => e as HostRequestError)));
    expect(
      errors.map((e, i) => e instanceof ConfigError && cases[i][1].test(e.message) && String((e as HostRequestError).errMsg).startsWith('request:fail ')),
    ).toEqual(cases.map(() => true));
    expect(host.calls).toHaveLength(0);
    expect(service.hits).toHaveLength(0);
    await expect(client.hostRequest(null as unknown as HostRequestCall)).rejects.toBeInstanceOf(ConfigError);
  });

  test('#42 item 7: the error event of a refused URL names it without its password (hostRequest, request())', async () => {
    const { client, host } = await setup();
    const events: Array<{ url: string }> = [];
    client.on('error', (event) => events.push(event));
    const url = service.url.replace('//', '//user:s3cret-pw@') + '/x';
    const errors = await Promise.all([client.hostRequest({ url }), client.get(url)].map((p) => p.catch((e: unknown) => e)));
    expect(errors.every((e) => e instanceof ConfigError)).toBe(true);
    expect(events.map((e) => e.url)).toEqual([service.url + '/x', service.url + '/x']);
    expect(JSON.stringify(events) + errors.map(String).join()).not.toContain('s3cret');
    expect(host.calls).toHaveLength(0);
  });
});

describe('client.hostRequest: the engine underneath', () => {
  test('a storm of 40 through WeChat’s 10-request limit on an ended token: one forced refresh, every request 200 with its body, queued ones leave with the new token', async () => {
    const { client, host, provider } = await setup();
    await client.hostRequest({ url: '/warm' });
    service.expireAll();
    service.hits.length = 0;
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        i % 2 ? client.hostRequest<Echo>({ url: '/p/' + i, method: 'POST', data: { i } }) : client.hostRequest<Echo>({ url: '/g/' + i }),
      ),
    );
    expect(results.map((r) => r.statusCode)).toEqual(Array(40).fill(200));
    expect(results.map((r) => (r.data.data.body ? JSON.parse(r.data.data.body) : ''))).toEqual(results.map((_, i) => (i % 2 ? { i } : '')));
    expect(provider.forced()).toBe(1);
    // Each request met at most one 401: the 10 on the wire were replayed, and the ones that waited
    // in the queue meanwhile left with the new token (TransportRequest.rebind), as request()'s do.
    const byPath = new Map<string, number[]>();
    for (const hit of service.hits) byPath.set(hit.path.split('?')[0], [...(byPath.get(hit.path.split('?')[0]) ?? []), hit.status]);
    expect([...byPath.values()].every((statuses) => statuses.join() === '200' || statuses.join() === '401,200')).toBe(true);
    expect(byPath.size).toBe(40);
    expect(service.hits.filter((h) => h.status === 401).length).toBeGreaterThanOrEqual(10);
    expect(service.hits.length).toBeLessThan(80);
    expect(host.maxSeen).toBeLessThanOrEqual(10);
  });

  test('a host task aborted while the shared refresh runs: never sent again, fail "request:fail abort"; the others succeed on one refresh', async () => {
    service = await startFakeService();
    const host = createHost('wx');
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let asked!: () => void;
    const refreshing = new Promise<void>((resolve) => (asked = resolve));
    let forced = 0;
    const client = createClient({
      baseUrl: service.url,
      request: host.request,
      tokenProvider: async ({ forceRefresh }) => {
        if (forceRefresh) {
          forced++;
          asked();
          await gate;
        }
        return service.issue();
      },
    });
    await client.hostRequest({ url: '/warm' });
    service.expireAll();
    service.hits.length = 0;
    const calls = ['/a', '/b', '/c'].map((url) => call(client, { url }));
    await refreshing;
    // Each met its 401 before the abort (on a loaded machine '/b' may still be on its way when '/a' starts the refresh).
    await vi.waitFor(() =>
      expect(
        service.hits
          .filter((h) => h.status === 401)
          .map((h) => h.path)
          .toSorted(),
      ).toEqual(['/a', '/b', '/c']),
    );
    calls[1].task.abort();
    release();
    const outcomes = await Promise.all(calls.map((c) => c.done));
    expect(outcomes.map((seen) => seen[0][0])).toEqual(['success', 'fail', 'success']);
    expect((outcomes[1][0][1] as HostRequestError).errMsg).toBe('request:fail abort');
    expect(forced).toBe(1);
    // '/b' met its 401 before the abort and was never replayed.
    expect(service.hits.map((h) => [h.path, h.status]).filter(([path]) => path === '/b')).toEqual([['/b', 401]]);
  });

  test('clearToken() while a request waits for its token: fail with an AbortError, nothing sent, and the next request asks the provider again', async () => {
    service = await startFakeService();
    const host = createHost('wx');
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let calls = 0;
    const client = createClient({
      baseUrl: service.url,
      request: host.request,
      tokenProvider: async () => {
        if (++calls === 1) await gate;
        return service.issue();
      },
    });
    const waiting = call(client, { url: '/waits' });
    await Promise.resolve();
    client.clearToken();
    release();
    const seen = await waiting.done;
    expect(seen[0][0]).toBe('fail');
    expect(seen[0][1]).toBeInstanceOf(AbortError);
    expect(host.calls).toHaveLength(0);
    expect((await client.hostRequest({ url: '/next' })).statusCode).toBe(200);
    expect(calls).toBe(2);
  });

  test('a second 401 after the replay arrives in success as that 401 (no loop), with one auth:failed', async () => {
    const { client, provider } = await setup();
    const failed: unknown[] = [];
    client.on('auth:failed', (e) => failed.push(e));
    service.rejectAll(true);
    const result = await client.hostRequest({ url: '/denied' });
    expect(result.statusCode).toBe(401);
    expect(service.hits).toHaveLength(2);
    expect(provider.forced()).toBe(1);
    expect(failed).toHaveLength(1);
  });

  test('beforeSend runs on every attempt of a hostRequest (the replay too) and sees its data; Authorization is not shown to it', async () => {
    const seen: Array<[number, unknown, string[]]> = [];
    const { client } = await setup(
      'wx',
      {},
      {
        beforeSend: (attempt: { attempt: number; body: unknown; headers: Record<string, string> }) => {
          seen.push([attempt.attempt, attempt.body, Object.keys(attempt.headers)]);
          attempt.headers['x-sign'] = 'sig-' + attempt.attempt;
        },
      },
    );
    await client.hostRequest({ url: '/warm' });
    service.expireAll();
    service.hits.length = 0;
    seen.length = 0;
    const result = await client.hostRequest<Echo>({ url: '/signed', method: 'POST', data: { a: 1 } });
    expect(result.statusCode).toBe(200);
    expect(seen.map(([n, body]) => [n, body])).toEqual([
      [1, { a: 1 }],
      [2, { a: 1 }],
    ]);
    expect(seen.every(([, , names]) => !names.includes('authorization'))).toBe(true);
    expect(service.hits.map((h) => h.headers['x-sign'])).toEqual(['sig-1', 'sig-2']);
  });
});
