// @vitest-environment node
// client.fetch (issue #32) on Node's own fetch, AbortSignal and streams: fetch's contract with
// the token engine underneath, and each adversarial order named.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import {
  AbortError,
  ConfigError,
  createClient,
  isChannelError,
  isRetryable,
  NetworkError,
  TimeoutError,
  type Client,
  type ClientOptions,
} from '../../src/index.js';
import type { ClientEvents } from '../../src/core/events.js';
import { fakeServices, providerFor } from '../conformance/suite.js';
import type { FakeService } from '../helpers/fake-service.js';
import { collectStrings } from '../helpers/scan.js';
import { createDeadlines } from '../../src/transports/fetch-native.js';
import { FULL, sized } from '../helpers/tier.js';

const start = fakeServices();
// The storm's calls: full-size in the integration tier, which runs this file again (test/helpers/tier.ts).
const STORM = sized(200, 40);

function clientOf(service: FakeService, extra: Partial<ClientOptions> = {}) {
  const provider = providerFor(service);
  return { client: createClient({ baseUrl: service.url, tokenProvider: provider, ...extra }), provider };
}

/** A promise with its resolve, for ordering a test by events instead of time. */
function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** A stream body that sends `parts`, then waits for `release` before it ends. */
function heldStream(parts: string[], release: Promise<void>) {
  const encoder = new TextEncoder();
  let pulled = 0;
  const started = deferred();
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      started.resolve();
      if (pulled < parts.length) return controller.enqueue(encoder.encode(parts[pulled++]));
      await release;
      controller.close();
    },
  });
  return { stream, started: started.promise };
}

describe('client.fetch: fetch with the token engine underneath', () => {
  test('a path, a URL under baseUrl, a URL object and a Request all reach the service with the Bearer, and resolve as Responses', async () => {
    const service = await start();
    const { client } = clientOf(service);
    const responses = [
      await client.fetch('/a?x=1'),
      await client.fetch(service.url + '/b'),
      await client.fetch(new URL(service.url + '/c')),
      await client.fetch(new Request(service.url + '/d', { method: 'PUT', body: 'text', headers: { 'x-own': 'yes' } })),
    ];
    expect(responses.every((r) => r instanceof Response && r.status === 200)).toBe(true);
    expect(service.hits.map((h) => [h.method, h.path, h.token])).toEqual([
      ['GET', '/a?x=1', service.issued[0]],
      ['GET', '/b', service.issued[0]],
      ['GET', '/c', service.issued[0]],
      ['PUT', '/d', service.issued[0]],
    ]);
    expect(service.hits[3].body).toBe('text');
    expect(service.hits[3].headers['x-own']).toBe('yes');
    // The body is the caller's to read, as fetch leaves it.
    expect(await responses[0].json()).toMatchObject({ code: 0, data: { path: '/a?x=1' } });
  });

  test('fetch semantics: every HTTP status resolves as the Response, an envelope is not unwrapped, nothing is retried', async () => {
    const service = await start();
    const { client } = clientOf(service);
    const statuses = await Promise.all(['/status/404', '/status/500', '/status/503', '/envelope/7'].map((p) => client.fetch(p)));
    expect(statuses.map((r) => r.status)).toEqual([404, 500, 503, 200]);
    expect(await statuses[3].json()).toEqual({ code: 7, message: 'business rule 7 failed' });
    // No retries of its own: the caller's stack decides (isRetryable).
    expect(service.hits).toHaveLength(4);
  });

  test("another origin, userinfo, or a path above baseUrl's is refused with a ConfigError and nothing is sent", async () => {
    const service = await start();
    const client = createClient({ baseUrl: service.url + '/api', tokenProvider: providerFor(service) });
    const port = new URL(service.url).port;
    const refused = [
      'https://evil.example/api/x',
      `http://user:pw@127.0.0.1:${port}/api/x`,
      `http://localhost:${port}/api/x`,
      service.url + '/admin',
      service.url + '/apix',
      '/../admin',
      '/%2e%2e/admin',
      new URL('https://evil.example/api/x'),
      new Request('https://evil.example/api/x'),
    ];
    const errors = await Promise.all(refused.map((input) => client.fetch(input).catch((e: unknown) => e)));
    expect(errors.map((e) => e instanceof ConfigError && /refusing|climbs above/.test((e as Error).message))).toEqual(refused.map(() => true));
    expect(collectStrings(errors).filter((text) => text.includes('pw'))).toEqual([]);
    expect(service.hits).toHaveLength(0);
  });

  /** Each URL (the port put in) through `calls` on a client bound to `/api`: the errors and events, none with the password, nothing sent. */
  async function refusedWithoutPassword(urls: (port: string) => string[], calls: (client: Client, url: string) => Array<Promise<unknown>>) {
    const service = await start();
    const client = createClient({ baseUrl: service.url + '/api', tokenProvider: providerFor(service) });
    const events: ClientEvents['error'][] = [];
    client.on('error', (event) => events.push(event));
    const port = new URL(service.url).port;
    const errors = await Promise.all(urls(port).flatMap((url) => calls(client, url).map((p) => p.catch((e: unknown) => e))));
    expect(errors.every((e) => e instanceof ConfigError)).toBe(true);
    expect(events).toHaveLength(errors.length);
    expect(collectStrings([events, errors]).filter((text) => text.includes('s3cret'))).toEqual([]);
    expect(service.hits).toHaveLength(0);
    return { events, port };
  }

  test('#42 item 7: the error event of a refused URL carries no password (request(), client.fetch with a string and a URL object)', async () => {
    const { events, port } = await refusedWithoutPassword(
      (p) => [`http://user:s3cret-pw@127.0.0.1:${p}/api/x`],
      (client, url) => [client.get(url), client.fetch(url), client.fetch(new URL(url))],
    );
    expect(events.map((e) => e.url)).toEqual([0, 1, 2].map(() => `http://127.0.0.1:${port}/api/x`));
  });

  test('#42 item 7, as a URL parser reads the userinfo: a line break or backslashes around it, a fragment after it, two @: no password in the error or its event', async () => {
    // Each is read by a WHATWG parser (and by fetch) as user "al...", password "s3cret-pw": tab and line break dropped, "\\" read as "/".
    // Before the fix: the events of the first two, and the fragment's error message, carried the password.
    const { events } = await refusedWithoutPassword(
      (port) => [
        `http://al\nice:s3cret-pw@127.0.0.1:${port}/api/x`,
        `http:\\\\alice:s3cret-pw@127.0.0.1:${port}/api/x`,
        `http://alice:s3cret-pw@127.0.0.1:${port}/api/x#top`,
        `http://a@b:s3cret-pw@127.0.0.1:${port}/api/x#top`,
      ],
      (client, url) => [client.get(url), client.fetch(url)],
    );
    expect(events).toHaveLength(8);
  });

  test(`one forced refresh for a storm of ${STORM} (GET, POST bodies, Requests) on an expired token; every body intact`, async () => {
    const service = await start();
    const provider = providerFor(service, 5);
    const client = createClient({ baseUrl: service.url, tokenProvider: provider });
    await client.fetch('/warm');
    service.expireAll();
    service.hits.length = 0;
    const results = await Promise.all(
      Array.from({ length: STORM }, (_, i) => {
        const body = JSON.stringify({ i, pad: 'x'.repeat(i) });
        if (i % 3 === 0) return client.fetch('/g/' + i);
        if (i % 3 === 1) return client.fetch('/p/' + i, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
        return client.fetch(new Request(service.url + '/r/' + i, { method: 'POST', body, headers: { 'content-type': 'application/json' } }));
      }),
    );
    expect(results.map((r) => r.status)).toEqual(Array(STORM).fill(200));
    expect(provider.forced()).toBe(1);
    const bodies = await Promise.all(results.map(async (r) => ((await r.json()) as { data: { body: string } }).data.body));
    expect(bodies.map((body, i) => (i % 3 ? JSON.parse(body) : body))).toEqual(bodies.map((_, i) => (i % 3 ? { i, pad: 'x'.repeat(i) } : '')));
    // Exactly one replay each: the first attempts (401) and their replays.
    expect(service.hits).toHaveLength(2 * STORM);
  });

  test('a stream body is read once, inside the call, and sent again by the replay', async () => {
    const service = await start();
    const { client, provider } = clientOf(service);
    await client.fetch('/warm');
    service.expireAll();
    const { stream } = heldStream(['{"a":', '1}'], Promise.resolve());
    const response = await client.fetch('/stream', {
      method: 'POST',
      body: stream,
      headers: { 'content-type': 'application/json' },
      duplex: 'half',
    } as RequestInit);
    expect(response.status).toBe(200);
    const [first, replay] = service.hits.slice(1);
    expect([first.status, replay.status]).toEqual([401, 200]);
    expect(replay.body).toBe('{"a":1}');
    expect(first.body).toBe(replay.body);
    expect(provider.forced()).toBe(1);
  });

  test("a Request's streamed body is kept for the replay, and a Request whose body was already read is refused, nothing sent", async () => {
    const service = await start();
    const { client } = clientOf(service);
    await client.fetch('/warm');
    service.expireAll();
    const { stream } = heldStream(['part-1,', 'part-2'], Promise.resolve());
    const request = new Request(service.url + '/up', { method: 'POST', body: stream, duplex: 'half' } as RequestInit);
    expect((await client.fetch(request)).status).toBe(200);
    expect(service.hits.slice(1).map((h) => [h.status, h.body])).toEqual([
      [401, 'part-1,part-2'],
      [200, 'part-1,part-2'],
    ]);
    const used = new Request(service.url + '/used', { method: 'POST', body: 'once' });
    await used.text();
    const error = await client.fetch(used).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/already read/);
    expect(service.hits.filter((h) => h.path === '/used')).toHaveLength(0);
  });

  test('a redirect to another origin: the Bearer does not follow it (fetch drops Authorization across origins)', async () => {
    const seen: Array<string | undefined> = [];
    const other = await listen(createServer((req, res) => (seen.push(req.headers.authorization), res.end('elsewhere'))));
    const service = await start();
    const redirector = await listen(
      createServer((req, res) => {
        seen.push(req.headers.authorization);
        res.writeHead(302, { location: other.url + '/landing' }).end();
      }),
    );
    try {
      const client = createClient({ baseUrl: redirector.url, tokenProvider: providerFor(service) });
      const response = await client.fetch('/go');
      expect(await response.text()).toBe('elsewhere');
      expect(seen).toEqual(['Bearer ' + service.issued[0], undefined]);
    } finally {
      await Promise.all([other.close(), redirector.close()]);
    }
  });

  test('#42 item 8: a same-origin redirect out of baseUrl keeps Authorization, as fetch does (documented); redirect: "error" keeps the token from it, for client.fetch and the client’s own calls', async () => {
    const seen: Array<[string, string | undefined]> = [];
    const service = await start();
    const server = await listen(
      createServer((req, res) => {
        seen.push([req.url ?? '', req.headers.authorization]);
        if (req.url?.startsWith('/api/')) return void res.writeHead(302, { location: '/other-app/landing' }).end();
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"code":0,"data":"elsewhere"}');
      }),
    );
    try {
      const client = createClient({ baseUrl: server.url + '/api', tokenProvider: providerFor(service) });
      expect(await (await client.fetch('/go')).json()).toEqual({ code: 0, data: 'elsewhere' });
      expect(seen).toEqual([
        ['/api/go', 'Bearer ' + service.issued[0]],
        ['/other-app/landing', 'Bearer ' + service.issued[0]],
      ]);
      seen.length = 0;
      await expect(client.fetch('/go', { redirect: 'error' })).rejects.toBeInstanceOf(NetworkError);
      const own = createClient({ baseUrl: server.url + '/api', tokenProvider: providerFor(service), ky: { redirect: 'error' }, retry: 0 });
      await expect(own.get('/go')).rejects.toBeInstanceOf(NetworkError);
      // Sent with the token to baseUrl, refused there: the landing page outside it was never asked.
      expect(seen.map(([path, auth]) => [path, !!auth?.startsWith('Bearer ')])).toEqual([
        ['/api/go', true],
        ['/api/go', true],
      ]);
    } finally {
      await server.close();
    }
  });

  test('stale 401: a 401 on a token already replaced is replayed with the new one, no provider call', async () => {
    const service = await start({ strictRotation: true });
    const { client, provider } = clientOf(service);
    await client.fetch('/warm');
    const a = client.fetch('/late401/gate');
    await service.gate.arrived();
    service.rejectNext(1);
    await client.fetch('/b');
    expect(provider.calls).toHaveLength(2);
    service.gate.open();
    expect((await a).status).toBe(200);
    expect(provider.calls).toHaveLength(2);
    expect(service.hits.filter((h) => h.path === '/late401/gate').map((h) => h.status)).toEqual([401, 200]);
  });

  test('never loops: a second 401 resolves as that 401 Response, with one auth:failed and no error event', async () => {
    const service = await start();
    const { client, provider } = clientOf(service);
    const events: Array<keyof ClientEvents> = [];
    client.on('*', (type) => events.push(type));
    service.rejectAll(true);
    const response = await client.fetch('/x', { method: 'POST', body: 'b' });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ code: 401 });
    expect(service.hits).toHaveLength(2);
    expect(provider.calls).toHaveLength(2);
    expect(events.filter((e) => e === 'auth:failed')).toHaveLength(1);
    expect(events).not.toContain('error');
  });

  test('events and errors carry no token; a network failure is a NetworkError', async () => {
    const service = await start();
    const { client } = clientOf(service);
    const seen: unknown[] = [];
    client.on('*', (type, payload) => seen.push([type, payload]));
    await client.fetch('/a');
    await client.fetch('/status/500');
    const dead = createClient({ baseUrl: 'http://127.0.0.1:9', tokenProvider: providerFor(service) });
    const error = await dead.fetch('/x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    for (const text of collectStrings([seen, error])) for (const token of service.issued) expect(text).not.toContain(token);
  });

  // Bound to the wall clock (the headers within 400 ms): the integration tier runs it (test/helpers/tier.ts).
  test.runIf(FULL)('timeout bounds each attempt up to the headers (TimeoutError); the body is then the caller’s to read', async () => {
    const service = await start();
    // 400 ms: the headers of a local answer arrive well within it even on a loaded CI machine (100 ms
    // did not, once); the body then takes about 800 ms, twice the timeout.
    const { client } = clientOf(service, { timeout: 400 });
    await expect(client.fetch('/slow/3000')).rejects.toBeInstanceOf(TimeoutError);
    const response = await client.fetch('/slow-download/4096/200');
    expect((await response.arrayBuffer()).byteLength).toBe(4096);
  });

  test.runIf(FULL)(
    'the attempts’ timeouts share one timer: slow calls time out in the order they started, fast ones between them succeed, and it re-arms after firing',
    async () => {
      const service = await start();
      const { client } = clientOf(service, { timeout: 150 });
      const order: string[] = [];
      const slow = (name: string) =>
        client.fetch('/slow/3000?' + name).then(
          () => order.push(name + ' answered'),
          (error: unknown) => order.push(name + (error instanceof TimeoutError ? ' timed out' : ' failed: ' + String(error))),
        );
      // Storms of slow attempts, each started while the timer is armed for an earlier deadline,
      // with fast calls finishing (and leaving the list) in between; then the same after the timer fired.
      for (const round of ['first', 'after the timer fired']) {
        order.length = 0;
        const calls: Promise<unknown>[] = [];
        for (let i = 0; i < 5; i++) {
          calls.push(slow('s' + i));
          expect((await client.fetch('/hello')).status).toBe(200);
        }
        await Promise.all(calls);
        expect({ round, order }).toEqual({ round, order: ['s0', 's1', 's2', 's3', 's4'].map((name) => name + ' timed out') });
      }
    },
  );

  test('wrong types from user code are ConfigErrors that say what to pass, and nothing is sent', async () => {
    const service = await start();
    const { client } = clientOf(service);
    const cases: Array<[unknown, unknown, RegExp]> = [
      [42, undefined, /fetch input must be a path, a URL under baseUrl or a Request; got 42/],
      [{ href: 1 }, undefined, /fetch input/],
      ['/a', 'POST', /fetch init must be an object/],
      ['/a', { headers: 5 }, /headers must be a Headers object/],
      ['/a', { headers: [['x-a']] }, /headers must be a Headers object, \[name, value\] pairs.*pair/],
      ['/a', { headers: { 'x-a': 1 } }, /headers.x-a must be a string/],
      ['/a', { method: 'G E T' }, /method must be an HTTP method name/],
      ['/a', { signal: 'stop' }, /signal must be an AbortSignal/],
      ['/a', { body: 'x' }, /GET requests have no body/],
      ['/a', { method: 'head', body: 'x' }, /HEAD requests have no body/],
      ['/a', { headers: { 'x-a': 'line\r\nbreak' } }, /line break/],
    ];
    const errors = await Promise.all(cases.map(([input, init]) => client.fetch(input as string, init as RequestInit).catch((e: unknown) => e)));
    expect(errors.map((e, i) => e instanceof ConfigError && cases[i][2].test(e.message))).toEqual(cases.map(() => true));
    expect(service.hits).toHaveLength(0);
  });

  test('a stream body on a GET is refused before it is read: the stream stays unlocked for the caller, nothing sent', async () => {
    const service = await start();
    const { client } = clientOf(service);
    const { stream } = heldStream(['never read'], Promise.resolve());
    const error = await client.fetch('/a', { body: stream, duplex: 'half' } as RequestInit).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(/GET requests have no body/);
    expect(stream.locked).toBe(false);
    expect(service.hits).toHaveLength(0);
  });

  test('a stream body that cannot be read (locked by a reader, partly read, errored): a ConfigError saying so and what to pass, nothing sent', async () => {
    const service = await start();
    const { client } = clientOf(service);
    const locked = heldStream(['x'], Promise.resolve()).stream;
    locked.getReader();
    const disturbed = heldStream(['a', 'b'], Promise.resolve()).stream;
    const reader = disturbed.getReader();
    await reader.read();
    reader.releaseLock();
    const errored = new ReadableStream({ start: (c) => c.error(new Error('disk gone')) });
    const errors = await Promise.all(
      [locked, disturbed, errored].map((body) => client.fetch('/up', { method: 'POST', body, duplex: 'half' } as RequestInit).catch((e: unknown) => e)),
    );
    // Before: "[channel-sdk] unexpected failure: Response body object should not be disturbed or locked".
    expect(errors.map((e) => e instanceof ConfigError && (e as Error).message)).toEqual([
      expect.stringMatching(/^\[channel-sdk\] the request body could not be read \(.+\); pass a stream nobody has read from or locked$/),
      expect.stringMatching(/^\[channel-sdk\] the request body could not be read \(.+\); pass a stream nobody has read from or locked$/),
      '[channel-sdk] the request body could not be read (disk gone); pass a stream nobody has read from or locked',
    ]);
    expect(service.hits).toHaveLength(0);
  });

  test('Authorization is the SDK’s own: set by the caller in any case, in init or a Request, it is a ConfigError', async () => {
    const service = await start();
    const { client } = clientOf(service);
    for (const [input, init] of [
      ['/a', { headers: { Authorization: 'Bearer mine' } }],
      ['/a', { headers: [['AUTHORIZATION', 'Bearer mine']] }],
      ['/a', { headers: new Headers({ authorization: 'Basic x' }) }],
      [new Request(service.url + '/a', { headers: { Authorization: 'Bearer mine' } }), undefined],
    ] as Array<[RequestInfo, RequestInit | undefined]>) {
      await expect(client.fetch(input, init)).rejects.toThrow(/is set by channel-sdk/);
    }
    expect(service.hits).toHaveLength(0);
  });

  test('the options fetch reads besides (credentials, cache, redirect, a Request’s own) reach the fetch underneath; keys it does not know are ignored', async () => {
    const service = await start();
    const seen: Array<[unknown, RequestInit | undefined]> = [];
    const client = createClient({
      baseUrl: service.url,
      tokenProvider: providerFor(service),
      fetch: (input, init) => (seen.push([input, init]), fetch(input, init)),
    });
    // ofetch hands fetch its whole options object: its own keys must pass untouched.
    await client.fetch('/a', { cache: 'no-store', redirect: 'error', retry: 3, onRequest: () => {} } as RequestInit);
    const request = new Request(service.url + '/b', { redirect: 'manual', method: 'DELETE' });
    await client.fetch(request);
    expect(seen[0][1]).toMatchObject({ cache: 'no-store', redirect: 'error', retry: 3, method: 'GET' });
    // A Request is handed on as the input, so its own mode, credentials and redirect hold.
    expect(seen[1][0]).toBe(request);
    expect(seen[1][1]).toMatchObject({ method: 'DELETE' });
    expect(service.hits.map((h) => h.method)).toEqual(['GET', 'DELETE']);
  });
});

describe('createDeadlines: every attempt’s timeout on one timer', () => {
  beforeEach(() => void vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] }));
  afterEach(() => void vi.useRealTimers());

  /** Controllers and the times (in fake ms) at which each was aborted. */
  function watch(count: number) {
    const aborted: Record<number, number> = {};
    const controllers = Array.from({ length: count }, (_, i) => {
      const controller = new AbortController();
      controller.signal.addEventListener('abort', () => (aborted[i] = performance.now()));
      return controller;
    });
    return { controllers, aborted };
  }

  test('each is aborted at its own deadline, in any order of arrival; one settled first never is', () => {
    const after = createDeadlines();
    const { controllers, aborted } = watch(4);
    const began = performance.now();
    after(controllers[0], 300);
    // Arrives later with an earlier deadline: the timer is armed again for it.
    vi.advanceTimersByTime(50);
    after(controllers[1], 100);
    const settle = after(controllers[2], 120);
    after(controllers[3], 600);
    vi.advanceTimersByTime(60);
    settle();
    // Settling twice, or after its deadline, changes nothing.
    settle();
    vi.advanceTimersByTime(1000);
    expect(Object.fromEntries(Object.entries(aborted).map(([i, at]) => [i, at - began]))).toEqual({ 0: 300, 1: 150, 3: 650 });
    expect(vi.getTimerCount()).toBe(0);
  });

  test('a storm: 10,000 attempts, the settled ones forgotten, the rest aborted on time by a handful of timer runs', () => {
    const after = createDeadlines();
    const { controllers, aborted } = watch(10_000);
    const began = performance.now();
    const set = vi.spyOn(globalThis, 'setTimeout');
    controllers.forEach((controller, i) => {
      const settle = after(controller, 1000);
      if (i % 2) settle();
      if (i % 1000 === 999) vi.advanceTimersByTime(10);
    });
    vi.advanceTimersByTime(2000);
    const times = Object.entries(aborted);
    expect(times.length).toBe(5000);
    // Each aborted 1000 ms after it began (it began in the 10 ms step it was made in).
    for (const [i, at] of times) expect(at - began - Math.floor(Number(i) / 1000) * 10).toBe(1000);
    expect(set.mock.calls.length).toBeLessThan(20);
    set.mockRestore();
  });

  test('the timer is unref’d: it never holds a Node process open', () => {
    vi.useRealTimers();
    const after = createDeadlines();
    const set = vi.spyOn(globalThis, 'setTimeout');
    const settle = after(new AbortController(), 60_000);
    const timer = set.mock.results[0].value as NodeJS.Timeout;
    expect(timer.hasRef()).toBe(false);
    settle();
    clearTimeout(timer);
    set.mockRestore();
  });
});

describe('client.fetch: abort and clearToken() at every await', () => {
  // Each stage the call can be in, and how the test holds it there.
  const stages = ['reading a stream body', 'waiting for the first token', 'on the wire', 'waiting for the refresh after a 401'] as const;
  for (const stage of stages) {
    for (const by of ['signal', 'clearToken()'] as const) {
      test(`${by} while ${stage}: AbortError, never sent (again), the others unaffected`, async () => {
        const service = await start();
        const gate = deferred();
        const asked = deferred();
        let held = stage === 'waiting for the first token' || stage === 'waiting for the refresh after a 401';
        const client = createClient({
          baseUrl: service.url,
          tokenProvider: async ({ forceRefresh }) => {
            if (held && (stage === 'waiting for the first token' || forceRefresh)) {
              asked.resolve();
              await gate.promise;
            }
            return service.issue();
          },
        });
        if (stage === 'waiting for the refresh after a 401') {
          held = false;
          await client.fetch('/warm');
          held = true;
          service.expireAll();
        }
        const controller = new AbortController();
        const release = deferred();
        const { stream, started } = heldStream(['x'], release.promise);
        const init: RequestInit & { duplex?: string } =
          stage === 'reading a stream body' ? { method: 'POST', body: stream, duplex: 'half' } : { method: 'POST', body: 'payload' };
        const path = stage === 'on the wire' ? '/late401/gate' : '/target';
        const call = client.fetch(path, { ...init, signal: controller.signal });
        // Another call that shares the refresh (and must not be hurt by this one's abort).
        const other = stage === 'waiting for the refresh after a 401' ? client.fetch('/other') : undefined;
        if (stage === 'reading a stream body') await started;
        else if (stage === 'on the wire') await service.gate.arrived();
        else await asked.promise;
        if (by === 'signal') controller.abort('left the page');
        else client.clearToken();
        const error = await call.catch((e: unknown) => e);
        expect(error).toBeInstanceOf(AbortError);
        expect((error as Error).message).toMatch(by === 'signal' ? /through its signal/ : /clearToken\(\) ran/);
        gate.resolve();
        release.resolve();
        service.gate.open();
        // A signal ends only its own call; a logout ends every call under way.
        const answered = await (other ?? Promise.resolve('none')).then(
          (r) => (r instanceof Response ? r.status : r),
          (e: unknown) => (e as Error).name,
        );
        expect(answered).toBe(!other ? 'none' : by === 'signal' ? 200 : 'AbortError');
        await new Promise((r) => setTimeout(r, 50));
        // Sent at most the once it was already on its way: never a replay, never after the abort.
        const sent = service.hits.filter((h) => h.path === path).map((h) => h.status);
        expect(sent).toEqual(stage === 'waiting for the refresh after a 401' ? [401] : stage === 'on the wire' ? [200] : []);
      });
    }
  }

  test('#42 item 4: AbortSignal.timeout() on the wire or while the token is awaited: a TimeoutError (TIMEOUT, its DOMException the cause), retryable', async () => {
    const service = await start();
    const { client } = clientOf(service, { tokenProvider: async () => (await new Promise((r) => setTimeout(r, 300)), service.issue()) });
    const errors = await Promise.all(
      [client.fetch('/first', { signal: AbortSignal.timeout(50) }), client.fetch('/slow/3000', { signal: AbortSignal.timeout(500) })].map((p) =>
        p.catch((e: unknown) => e),
      ),
    );
    expect(errors.map((e) => [e instanceof TimeoutError, (e as TimeoutError).code, ((e as TimeoutError).cause as Error).name, isRetryable(e)])).toEqual([
      [true, 'TIMEOUT', 'TimeoutError', true],
      [true, 'TIMEOUT', 'TimeoutError', true],
    ]);
    // The first was never sent: it timed out waiting for the token.
    await new Promise((r) => setTimeout(r, 50));
    expect(service.hits.map((h) => h.path)).not.toContain('/first');
  });

  test('the caller’s AbortSignal still stops the body it reads after the Response resolved, as with fetch', async () => {
    const service = await start();
    const { client } = clientOf(service);
    const controller = new AbortController();
    const response = await client.fetch('/slow-download/65536/30', { signal: controller.signal });
    const reading = response.arrayBuffer();
    controller.abort();
    const error = await reading.catch((e: unknown) => e);
    expect((error as Error).name).toBe('AbortError');
    expect(isChannelError(error)).toBe(false);
  });
});

describe('#42 item 1: the fence reaches a body still arriving', () => {
  /** Reads `reader` until it fails or `ms` pass: the chunks that arrived, and how it ended. */
  async function drain(reader: ReadableStreamDefaultReader<Uint8Array>, ms: number) {
    let chunks = 0;
    const until = Date.now() + ms;
    try {
      while (Date.now() < until) {
        const { done } = await reader.read();
        if (done) return { chunks, ended: 'done' };
        chunks++;
      }
      return { chunks, ended: 'still streaming' };
    } catch (error) {
      return { chunks, ended: error as Error & { code?: string } };
    }
  }

  const fences = {
    'clearToken()': async (client: ReturnType<typeof createClient>) => client.clearToken(),
    // Another user: noticed by the next call, which fences what the previous user had under way.
    'a new tokenStore key()': async (client: ReturnType<typeof createClient>, store: { user: string }) => {
      store.user = 'bob';
      await client.fetch('/bob-first');
    },
  };
  for (const [by, fence] of Object.entries(fences)) {
    for (const call of ['client.fetch', 'download({ raw: true })'] as const) {
      test(`${by} after ${call} resolved: the body's next read fails with the fence's AbortError, no more chunks`, async () => {
        const service = await start();
        const store = { user: 'alice' };
        const client = createClient({
          baseUrl: service.url,
          tokenProvider: providerFor(service),
          tokenStore: { get: () => null, set() {}, remove() {}, key: () => store.user },
        });
        // 1 KiB every 10 ms for about 10 s: a stream of server-sent events, a large download.
        const path = '/slow-download/1048576/10';
        const response = call === 'client.fetch' ? await client.fetch(path) : await client.download(path, { raw: true });
        const reader = (response.body as ReadableStream<Uint8Array>).getReader();
        expect((await drain(reader, 60)).chunks).toBeGreaterThan(0);
        await fence(client, store);
        const after = await drain(reader, 220);
        expect({ chunks: after.chunks, name: (after.ended as Error).name, code: (after.ended as { code?: string }).code }).toEqual({
          chunks: 0,
          name: 'AbortError',
          code: 'ABORTED',
        });
        expect((after.ended as Error).message).toMatch(/clearToken\(\) ran/);
      });
    }
  }

  test('a body read to its end, or one nobody reads, is not held by the fence; a fence with none open is quiet', async () => {
    const service = await start();
    const { client } = clientOf(service);
    const bodies = await Promise.all(Array.from({ length: 5 }, () => client.fetch('/download/4096').then((r) => r.arrayBuffer())));
    expect(bodies.map((b) => b.byteLength)).toEqual(Array(5).fill(4096));
    client.clearToken();
    client.clearToken();
    expect((await client.fetch('/after')).status).toBe(200);
  });
});

describe('#42 item 5: without AbortSignal.any, the caller’s signal still stops the body', () => {
  const any = AbortSignal.any;
  beforeEach(() => void Reflect.deleteProperty(AbortSignal, 'any'));
  afterEach(() => void (AbortSignal.any = any));

  test('a signal shared by many calls: the bodies read and dropped are forgotten, and their listeners on it with them', async () => {
    const service = await start();
    const { client } = clientOf(service);
    const controller = new AbortController();
    let listening = 0;
    const add = controller.signal.addEventListener.bind(controller.signal);
    const remove = controller.signal.removeEventListener.bind(controller.signal);
    controller.signal.addEventListener = ((...args: Parameters<typeof add>) => (listening++, add(...args))) as typeof add;
    controller.signal.removeEventListener = ((...args: Parameters<typeof remove>) => (listening--, remove(...args))) as typeof remove;
    v8.setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    // A storm (test/helpers/tier.ts): 400 calls in the integration tier, 160 in npm test.
    const perRound = sized(100, 40);
    for (let round = 0; round < 4; round++) {
      for (let i = 0; i < perRound; i++) await (await client.fetch('/a', { signal: controller.signal })).arrayBuffer();
      gc();
      await new Promise((r) => setTimeout(r, 10));
    }
    // Without forgetting, one listener per call (and every body held).
    expect(listening).toBeLessThan(2 * perRound);
  });

  test('abort() after client.fetch resolved: the next read fails with the signal’s reason, no more chunks; other calls unaffected', async () => {
    expect(AbortSignal.any).toBeUndefined();
    const service = await start();
    const { client } = clientOf(service);
    const controller = new AbortController();
    const response = await client.fetch('/slow-download/1048576/10', { signal: controller.signal });
    const other = await client.fetch('/slow-download/8192/10');
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    controller.abort(new Error('left the page'));
    const next = await reader.read().then(
      () => 'a chunk',
      (e: unknown) => (e as Error).message,
    );
    expect(next).toBe('left the page');
    expect((await other.arrayBuffer()).byteLength).toBe(8192);
  });
});

async function listen(server: Server) {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}
