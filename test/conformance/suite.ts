/**
 * The 401 / refresh / retry conformance suite. It takes a client factory so that every
 * transport (fetch over ky, each mini-program host) runs the very same tests against a
 * real node:http server.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { z } from 'zod';
import type { Client } from '../../src/core/client.js';
import type { CoreClientOptions, TokenProviderContext } from '../../src/core/types.js';
import {
  AbortError,
  ApiError,
  HttpError,
  isChannelError,
  NetworkError,
  ResponseError,
  TimeoutError,
  TokenProviderError,
  UnauthorizedError,
} from '../../src/errors/index.js';
import { createClock, makeJwt, startFakeService, type FakeService, type FakeServiceOptions } from '../helpers/fake-service.js';
import { collectStrings } from '../helpers/scan.js';
import { sized } from '../helpers/tier.js';

export type ClientFactory = (options: CoreClientOptions) => Client;

/** A tokenProvider that issues from the fake service and records how it was called. */
export function providerFor(service: FakeService, delayMs = 0) {
  const calls: TokenProviderContext[] = [];
  const provider = async (context: TokenProviderContext) => {
    calls.push(context);
    if (delayMs) await new Promise((resolve) => setTimeout(resolve, delayMs));
    return service.issue();
  };
  return Object.assign(provider, { calls, forced: () => calls.filter((c) => c.forceRefresh).length });
}

const quick = { retry: { delay: () => 1 } };

/** Closes every server handed to the returned function after each test of the enclosing describe. */
export function closedAfterEach(): <T extends { close(): Promise<unknown> }>(server: T) => T {
  const open: Array<{ close(): Promise<unknown> }> = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
  });
  return (server) => (open.push(server), server);
}

/** Starts fake services for the tests of the enclosing describe, each closed after its test. */
export function fakeServices(): (options?: FakeServiceOptions) => Promise<FakeService> {
  const closing = closedAfterEach();
  return async (options) => closing(await startFakeService(options));
}

/** Calls at once in the storm: 200 in the integration tier (storms.integration.test.ts), 40 in npm test. */
const STORM = sized(200, 40);

/**
 * The storm: many calls failing together on one token cost one forced refresh. Part of the suite,
 * and run full-size over every transport by storms.integration.test.ts.
 */
export function stormSuite(name: string, createClient: ClientFactory): void {
  describe(`storms: ${name}`, () => {
    const start = fakeServices();

    for (const strictRotation of [false, true]) {
      test(`one refresh for many 401s: ${STORM} concurrent (half POST) on an expired token${strictRotation ? ', strict rotation' : ''}`, async () => {
        const service = await start({ strictRotation });
        const provider = providerFor(service, 5);
        const client = createClient({ baseUrl: service.url, tokenProvider: provider, ...quick });
        await client.get('/warm');
        service.expireAll();
        service.hits.length = 0;
        const results = await Promise.all(
          Array.from({ length: STORM }, (_, i) =>
            i % 2 ? client.post<{ body: string }>('/p/' + i, { json: { i, pad: 'x'.repeat(i) } }) : client.get<{ body: string }>('/g/' + i),
          ),
        );
        expect(provider.forced()).toBe(1);
        expect(provider.calls).toHaveLength(2);
        const perPath = new Map<string, number>();
        for (const hit of service.hits) perPath.set(hit.path, (perPath.get(hit.path) ?? 0) + 1);
        expect(perPath.size).toBe(STORM);
        for (const count of perPath.values()) expect(count).toBeLessThanOrEqual(2);
        const posted = results.map((r, i) => [r, i] as const).filter(([, i]) => i % 2);
        expect(posted.map(([r]) => JSON.parse(r.body))).toEqual(posted.map(([, i]) => ({ i, pad: 'x'.repeat(i) })));
        for (const hit of service.hits.filter((h) => h.status === 200)) expect(hit.token).toBe(service.issued[1]);
      });
    }
  });
}

export function conformanceSuite(name: string, createClient: ClientFactory): void {
  stormSuite(name, createClient);
  describe(`conformance: ${name}`, () => {
    const start = fakeServices();

    test('Bearer on every request, from tokenProvider only', async () => {
      const service = await start();
      const client = createClient({ baseUrl: service.url, tokenProvider: providerFor(service), headers: { 'x-app': 'demo' } });
      await client.get('/a');
      await client.post('/b', { json: { n: 1 } });
      await client.request('/c', { method: 'PUT', json: { n: 2 } });
      await client.delete('/d');
      await client.patch('/e', { body: 'raw', headers: { 'content-type': 'text/plain' } });
      expect(service.hits).toHaveLength(5);
      for (const hit of service.hits) {
        expect(hit.token).toBe(service.issued[0]);
        expect(hit.headers['x-app']).toBe('demo');
      }
      expect(service.hits.map((h) => h.method)).toEqual(['GET', 'POST', 'PUT', 'DELETE', 'PATCH']);
    });

    test('asks for JSON (Accept: application/json) unless the caller sets its own Accept', async () => {
      const service = await start();
      const client = createClient({ baseUrl: service.url, tokenProvider: providerFor(service) });
      await client.get('/a');
      await client.get('/b', { headers: { Accept: 'application/vnd.channel+json' } });
      expect(service.hits.map((h) => h.headers.accept)).toEqual(['application/json', 'application/vnd.channel+json']);
    });

    test('50 concurrent first calls make 1 provider call', async () => {
      const service = await start();
      const provider = providerFor(service, 20);
      const client = createClient({ baseUrl: service.url, tokenProvider: provider });
      await Promise.all(Array.from({ length: 50 }, (_, i) => client.get('/item/' + i)));
      expect(provider.calls).toHaveLength(1);
      expect(provider.calls[0].forceRefresh).toBe(false);
      expect(service.hits).toHaveLength(50);
    });

    test('refreshes once and retries: 401 -> forced refresh -> one replay -> success, POST body identical', async () => {
      const service = await start();
      const provider = providerFor(service);
      const client = createClient({ baseUrl: service.url, tokenProvider: provider, headers: { 'x-trace': 't1' } });
      await client.get('/warm');
      service.expireAll();
      const body = { text: '快件已发出', list: [1, 2, 3] };
      const data = await client.post<{ body: string }>('/orders?x=1', { json: body, headers: { 'x-req': 'r1' } });
      expect(JSON.parse(data.body)).toEqual(body);
      const [first, replay] = service.hits.slice(1);
      expect(first.status).toBe(401);
      expect(replay.status).toBe(200);
      expect(replay.method).toBe('POST');
      expect(replay.path).toBe('/orders?x=1');
      expect(replay.body).toBe(first.body);
      expect(replay.headers['content-type']).toBe(first.headers['content-type']);
      expect(replay.headers['x-req']).toBe('r1');
      expect(replay.headers['x-trace']).toBe('t1');
      expect(replay.token).not.toBe(first.token);
      expect(provider.calls.map((c) => c.forceRefresh)).toEqual([false, true]);
    });

    test('never loops: a server that rejects every token gets exactly 2 attempts and one auth:failed', async () => {
      const service = await start();
      const provider = providerFor(service);
      const client = createClient({ baseUrl: service.url, tokenProvider: provider });
      const failed: unknown[] = [];
      client.on('auth:failed', (e) => failed.push(e));
      service.rejectAll(true);
      const error = await client.post('/x', { json: { a: 1 } }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UnauthorizedError);
      expect((error as UnauthorizedError).code).toBe('UNAUTHORIZED');
      expect((error as UnauthorizedError).message).toMatch(/sign in again/);
      expect(service.hits).toHaveLength(2);
      expect(failed).toHaveLength(1);
      expect(provider.calls).toHaveLength(2);
    });

    test('says so when forceRefresh returns the same token (provider cache not bypassed)', async () => {
      const service = await start();
      const token = service.issue();
      const client = createClient({ baseUrl: service.url, tokenProvider: () => token });
      service.expireAll();
      const error = await client.get('/x').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UnauthorizedError);
      expect((error as Error).message).toMatch(/forceRefresh: true with the very token just rejected/);
      expect(service.hits).toHaveLength(2);
    });

    test('late 401 after a refresh: retries with the new token, no new provider call', async () => {
      const service = await start({ strictRotation: true });
      const provider = providerFor(service);
      const client = createClient({ baseUrl: service.url, tokenProvider: provider });
      await client.get('/warm');
      // A leaves with token 1 and waits at the service's gate; meanwhile B's 401 installs token 2,
      // which (strict rotation) revokes token 1; then A is checked, so its 401 arrives after the refresh.
      const a = client.get('/late401/gate');
      await service.gate.arrived();
      service.rejectNext(1);
      await client.get('/b');
      expect(provider.calls).toHaveLength(2);
      service.gate.open();
      await expect(a).resolves.toMatchObject({ path: '/late401/gate' });
      expect(provider.calls).toHaveLength(2);
      const hitsOfA = service.hits.filter((h) => h.path === '/late401/gate');
      expect(hitsOfA.map((h) => h.status)).toEqual([401, 200]);
      expect(hitsOfA.map((h) => h.token)).toEqual([service.issued[0], service.issued[1]]);
    });

    test('a forced refresh never merges into a plain provider call in flight', async () => {
      const service = await start();
      const stale = service.issue();
      const calls: boolean[] = [];
      // A provider with its own cache: a plain call returns the cached (stale) token slowly.
      const client = createClient({
        baseUrl: service.url,
        tokenProvider: async ({ forceRefresh }) => {
          calls.push(forceRefresh);
          if (forceRefresh) return service.issue();
          await new Promise((resolve) => setTimeout(resolve, 80));
          return stale;
        },
      });
      service.expireAll();
      const plain = client.get('/a'); // plain call in flight, will bring the stale token
      await new Promise((resolve) => setTimeout(resolve, 10));
      const forced = client.getToken({ forceRefresh: true });
      await expect(forced).resolves.toBe(service.issued[1]);
      await expect(plain).resolves.toBeTruthy();
      expect(calls).toEqual([false, true]);
    });

    for (const [label, value, pattern] of [
      ['throws', new Error('backend down'), /tokenProvider threw: backend down/],
      ['returns an object', { access_token: 'x' }, /returned an object; return access_token, the string itself/],
      ['returns the whole response', { code: 0, data: { access_token: 'x' } }, /return data\.access_token, the string itself/],
      [
        "returns getToken's answer",
        { accessToken: 'x', expiresIn: 900, tokenType: 'Bearer', expiresAt: 1 },
        /returned an object; return accessToken, the string/,
      ],
      ['returns the fetch Response', new Response('{}'), /returned a Response; return \(await response\.json\(\)\)\.access_token/],
      [
        'returns the request task',
        { abort() {}, onHeadersReceived() {} },
        /returned a request task; return a Promise, resolve\(res\.data\.access_token\) in success/,
      ],
      ['returns an empty string', '', /empty string/],
      ['returns undefined', undefined, /returned undefined.*return/],
      ['returns a non-JWT', 'console-session-abc123', /not a JWT/],
      ['returns "Bearer <jwt>"', 'Bearer ' + makeJwt({ iat: 1, exp: 2 }), /starting with "Bearer "/],
    ] as const) {
      test(`provider ${label} -> TokenProviderError, then the next call recovers`, async () => {
        const service = await start();
        let bad = true;
        const tokenErrors: unknown[] = [];
        const client = createClient({
          baseUrl: service.url,
          tokenProvider: async () => {
            if (bad) {
              if (value instanceof Error) throw value;
              return value as string;
            }
            return service.issue();
          },
        });
        client.on('token:error', (e) => tokenErrors.push(e));
        const error = await client.get('/x').catch((e: unknown) => e);
        expect(error).toBeInstanceOf(TokenProviderError);
        expect((error as Error).message).toMatch(pattern);
        expect((error as Error).message).toMatch(/^\[channel-sdk\] /);
        expect(tokenErrors).toHaveLength(1);
        expect(service.hits).toHaveLength(0);
        bad = false;
        await expect(client.get('/x')).resolves.toMatchObject({ method: 'GET' });
      });
    }

    test("provider returns the JWT with a line break after it (a first try's res.text()): sent without it", async () => {
      const service = await start();
      const client = createClient({ baseUrl: service.url, tokenProvider: async () => '  ' + service.issue() + '\r\n' });
      await expect(client.get('/x')).resolves.toMatchObject({ method: 'GET' });
      expect(service.hits.map((h) => h.token)).toEqual([service.issued[0]]);
      expect(await client.getToken()).toBe(service.issued[0]);
    });

    test('provider hangs past tokenTimeout -> TokenProviderError with its signal aborted, then recovers', async () => {
      const service = await start();
      let hang = true;
      let signal: AbortSignal | undefined;
      const client = createClient({
        baseUrl: service.url,
        tokenTimeout: 50,
        tokenProvider: (context) => {
          if (hang) {
            signal = context.signal;
            return new Promise<string>(() => {});
          }
          return service.issue();
        },
      });
      const error = await client.get('/x').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TokenProviderError);
      expect((error as Error).message).toMatch(/within 50 ms \(tokenTimeout\)/);
      // Hosts without AbortController give the provider no signal; where there is one, it fired.
      expect(signal === undefined || signal.aborted).toBe(true);
      hang = false;
      await expect(client.get('/x')).resolves.toBeTruthy();
    });

    test('proactive refresh: zero 401s across expiry, even with the device clock an hour off', async () => {
      const clock = createClock();
      const service = await start({ ttl: 900, clock });
      const provider = providerFor(service);
      const wrongDeviceClock = { now: () => clock.now() + 3_600_000, advance: () => {} };
      const client = createClient({ baseUrl: service.url, tokenProvider: provider, now: wrongDeviceClock.now, refreshLeeway: 60 });
      // 40 minutes of traffic, one request every 20 s (three in refreshLeeway): crosses two expiries.
      for (let i = 0; i < 120; i++) {
        await client.get('/tick/' + i);
        clock.advance(20_000);
        // Let a background refresh land before the next tick.
        await new Promise((resolve) => setTimeout(resolve, 0));
      }
      expect(service.hits.filter((h) => h.status === 401)).toHaveLength(0);
      expect(provider.calls.length).toBeGreaterThanOrEqual(3);
      expect(provider.calls.slice(1).every((c) => c.forceRefresh)).toBe(true);
    });

    test('refreshLeeway: 0 refreshes only on 401', async () => {
      const clock = createClock();
      const service = await start({ ttl: 60, clock });
      const provider = providerFor(service);
      const client = createClient({ baseUrl: service.url, tokenProvider: provider, now: clock.now, refreshLeeway: 0 });
      await client.get('/a');
      clock.advance(61_000);
      await client.get('/b');
      expect(service.hits.map((h) => h.status)).toEqual([200, 401, 200]);
    });

    test('an expired held token is replaced before sending (no 401)', async () => {
      const clock = createClock();
      const service = await start({ ttl: 60, clock });
      const provider = providerFor(service);
      const client = createClient({ baseUrl: service.url, tokenProvider: provider, now: clock.now });
      await client.get('/a');
      clock.advance(120_000);
      await client.get('/b');
      expect(service.hits.map((h) => h.status)).toEqual([200, 200]);
      expect(provider.calls.map((c) => c.forceRefresh)).toEqual([false, true]);
    });

    test('abort during a shared refresh rejects that request only; the refresh goes on for the others', async () => {
      const service = await start();
      const provider = providerFor(service, 100);
      const client = createClient({ baseUrl: service.url, tokenProvider: provider });
      const controller = new AbortController();
      const aborted = client.get('/a', { signal: controller.signal });
      const other = client.get('/b');
      setTimeout(() => controller.abort(new Error('user left the page')), 20);
      const error = await aborted.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AbortError);
      expect((error as AbortError).code).toBe('ABORTED');
      expect(((error as AbortError).cause as Error).message).toBe('user left the page');
      await expect(other).resolves.toMatchObject({ path: '/b' });
      expect(provider.calls).toHaveLength(1);
      expect(service.hits.map((h) => h.path)).toEqual(['/b']);
    });

    test('abort while waiting on the forced refresh after a 401', async () => {
      const service = await start();
      const provider = providerFor(service, 100);
      const client = createClient({ baseUrl: service.url, tokenProvider: provider });
      await client.get('/warm');
      service.expireAll();
      const controller = new AbortController();
      const aborted = client.get('/a', { signal: controller.signal });
      const other = client.get('/b');
      setTimeout(() => controller.abort(), 50);
      await expect(aborted).rejects.toBeInstanceOf(AbortError);
      await expect(other).resolves.toMatchObject({ path: '/b' });
      expect(provider.forced()).toBe(1);
    });

    test('abort before start and during the request', async () => {
      const service = await start();
      const client = createClient({ baseUrl: service.url, tokenProvider: providerFor(service) });
      await expect(client.get('/x', { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(AbortError);
      const controller = new AbortController();
      const pending = client.get('/slow/500', { signal: controller.signal });
      setTimeout(() => controller.abort(), 50);
      await expect(pending).rejects.toBeInstanceOf(AbortError);
    });

    test('no token in any event or error (scan them all)', async () => {
      const service = await start();
      const provider = providerFor(service);
      // Only the slow call has a short timeout: a 100 ms bound on every call timed out '/ok' on a loaded machine.
      const client = createClient({ baseUrl: service.url, tokenProvider: provider, ...quick });
      const seen: unknown[] = [];
      client.on('*', (type, payload) => seen.push(type, payload));
      await client.get('/ok');
      service.expireAll();
      await client.post('/after-expiry', { json: { a: 1 } });
      seen.push(await client.get('/status/500').catch((e: unknown) => e));
      seen.push(await client.get('/status/404').catch((e: unknown) => e));
      seen.push(await client.get('/envelope/42').catch((e: unknown) => e));
      seen.push(await client.get('/text').catch((e: unknown) => e));
      seen.push(await client.get('/slow/300', { timeout: 100 }).catch((e: unknown) => e));
      seen.push(await client.get('/drop/9').catch((e: unknown) => e));
      seen.push(await client.get('/x', { schema: z.object({ nope: z.string() }) }).catch((e: unknown) => e));
      service.rejectAll(true);
      seen.push(await client.get('/denied').catch((e: unknown) => e));
      const errors = seen.filter(isChannelError);
      expect(errors.map((e) => e.code).toSorted()).toEqual(
        ['API_ERROR', 'HTTP_ERROR', 'HTTP_ERROR', 'NETWORK_ERROR', 'RESPONSE_ERROR', 'RESPONSE_ERROR', 'TIMEOUT', 'UNAUTHORIZED'].toSorted(),
      );
      expect(seen.length).toBeGreaterThan(40);
      const text = collectStrings(seen).join('\n');
      for (const token of service.issued) {
        expect(text).not.toContain(token);
        expect(text).not.toContain(token.split('.')[2]);
      }
    });

    describe('envelope', () => {
      test('{ code: 0, data } resolves to data', async () => {
        const service = await start();
        const client = createClient({ baseUrl: service.url, tokenProvider: providerFor(service) });
        await expect(client.get('/x', { searchParams: { q: 'a b', n: 2, skip: undefined, tag: ['x', 'y'] } })).resolves.toEqual({
          method: 'GET',
          path: '/x?q=a%20b&n=2&tag=x&tag=y',
          body: '',
        });
      });
      test('code !== 0 -> ApiError with apiCode and the message', async () => {
        const service = await start();
        const client = createClient({ baseUrl: service.url, tokenProvider: providerFor(service) });
        const error = (await client.get('/envelope/40012').catch((e: unknown) => e)) as ApiError;
        expect(error).toBeInstanceOf(ApiError);
        expect(error.apiCode).toBe(40012);
        expect(error.status).toBe(200);
        expect(error.message).toMatch(/code 40012: business rule 40012 failed/);
      });
      test('other non-2xx -> HttpError with status', async () => {
        const service = await start();
        const client = createClient({ baseUrl: service.url, tokenProvider: providerFor(service) });
        const error = (await client.get('/status/404').catch((e: unknown) => e)) as HttpError;
        expect(error).toBeInstanceOf(HttpError);
        expect(error.status).toBe(404);
        expect(error.method).toBe('GET');
        expect(error.url).toBe(service.url + '/status/404');
      });
      test('unreadable body -> ResponseError; no envelope -> ResponseError naming raw: true', async () => {
        const service = await start();
        const client = createClient({ baseUrl: service.url, tokenProvider: providerFor(service) });
        await expect(client.get('/text')).rejects.toThrow(ResponseError);
        await expect(client.get('/plain')).rejects.toThrow(/raw: true/);
      });
      test('raw: true resolves to the body as it came', async () => {
        const service = await start();
        const client = createClient({ baseUrl: service.url, tokenProvider: providerFor(service) });
        await expect(client.get('/plain', { raw: true })).resolves.toEqual({ hello: 'world' });
        await expect(client.get('/envelope/7', { raw: true })).resolves.toEqual({ code: 7, message: 'business rule 7 failed' });
      });
      test('schema (Standard Schema, zod) validates data and lists the issues', async () => {
        const service = await start();
        const client = createClient({ baseUrl: service.url, tokenProvider: providerFor(service) });
        const ok = await client.get('/x', { schema: z.object({ method: z.literal('GET'), path: z.string() }) });
        expect(ok.method).toBe('GET');
        const error = (await client.get('/x', { schema: z.object({ method: z.number(), extra: z.string() }) }).catch((e: unknown) => e)) as ResponseError;
        expect(error).toBeInstanceOf(ResponseError);
        expect(error.message).toMatch(/does not match the schema: method: .*; extra: /);
        expect(error.issues?.map((i) => i.path)).toEqual([['method'], ['extra']]);
      });
    });

    describe('transient retries', () => {
      test('GET is retried on 503 and succeeds; retry events say why', async () => {
        const service = await start();
        const client = createClient({ baseUrl: service.url, tokenProvider: providerFor(service), ...quick });
        const retries: unknown[] = [];
        client.on('retry', (e) => retries.push(e));
        await expect(client.get('/flaky/2')).resolves.toBeTruthy();
        expect(service.hits.map((h) => h.status)).toEqual([503, 503, 200]);
        expect(retries).toMatchObject([
          { reason: 'status', status: 503, attempt: 2 },
          { reason: 'status', status: 503, attempt: 3 },
        ]);
      });
      test('POST is not retried on 503', async () => {
        const service = await start();
        const client = createClient({ baseUrl: service.url, tokenProvider: providerFor(service), ...quick });
        await expect(client.post('/flaky/1', { json: {} })).rejects.toBeInstanceOf(HttpError);
        expect(service.hits).toHaveLength(1);
      });
      test('gives up after `retry` retries', async () => {
        const service = await start();
        const client = createClient({ baseUrl: service.url, tokenProvider: providerFor(service), retry: { limit: 1, delay: () => 1 } });
        await expect(client.get('/flaky/5')).rejects.toMatchObject({ status: 503 });
        expect(service.hits).toHaveLength(2);
      });
      test('Retry-After is honoured; one beyond maxRetryAfter ends the retries', async () => {
        const service = await start();
        const client = createClient({ baseUrl: service.url, tokenProvider: providerFor(service), retry: { delay: () => 5000 } });
        const retries: { delayMs: number }[] = [];
        client.on('retry', (e) => retries.push(e));
        await expect(client.get('/status/429')).rejects.toMatchObject({ status: 429 });
        expect(retries.map((r) => r.delayMs)).toEqual([0, 0]);
        const before = service.hits.length;
        await expect(client.get('/retry-after/120')).rejects.toMatchObject({ status: 503 });
        expect(service.hits.length - before).toBe(1);
      });
      test('network errors are retried for GET, not for POST', async () => {
        const service = await start();
        const client = createClient({ baseUrl: service.url, tokenProvider: providerFor(service), ...quick });
        await expect(client.get('/drop/1')).resolves.toBeTruthy();
        await expect(client.post('/drop/1', { json: { a: 1 } })).rejects.toBeInstanceOf(NetworkError);
        await expect(client.get('/drop/5')).rejects.toBeInstanceOf(NetworkError);
      });
      test('a timed-out attempt counts as transient', async () => {
        const service = await start();
        const client = createClient({ baseUrl: service.url, tokenProvider: providerFor(service), timeout: 80, ...quick });
        const error = await client.get('/slow/300').catch((e: unknown) => e);
        expect(error).toBeInstanceOf(TimeoutError);
        expect(service.hits.filter((h) => h.path === '/slow/300').length).toBeLessThanOrEqual(3);
        await expect(client.post('/slow/300', { json: {} })).rejects.toBeInstanceOf(TimeoutError);
      });
      test('the 401 replay has its own budget: retry 0 still replays once after 401', async () => {
        const service = await start();
        const client = createClient({ baseUrl: service.url, tokenProvider: providerFor(service), retry: 0 });
        await client.get('/warm');
        service.expireAll();
        await expect(client.get('/x')).resolves.toBeTruthy();
      });
    });

    test('getToken and clearToken', async () => {
      const service = await start();
      const provider = providerFor(service);
      const client = createClient({ baseUrl: service.url, tokenProvider: provider });
      const first = await client.getToken();
      expect(await client.getToken()).toBe(first);
      const forced = await client.getToken({ forceRefresh: true });
      expect(forced).not.toBe(first);
      client.clearToken();
      await client.get('/x');
      expect(provider.calls.map((c) => c.forceRefresh)).toEqual([false, true, false]);
    });
  });
}
