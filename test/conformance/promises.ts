/**
 * The promises of API.md that an adversarial review found broken (issue #11), one named test
 * per defect, run over every transport like the conformance suite: logout fences requests
 * under way, both kinds of signal cancel at every stage, no token in any error or event,
 * isolated listeners, every failure a ChannelError with an `error` event, programming errors
 * refused before sending, option types, URL edges, HEAD and 204, abort before the provider.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, test, vi } from 'vitest';
import type { Client } from '../../src/core/client.js';
import type { ClientEvents } from '../../src/core/events.js';
import type { CoreClientOptions, SignalLike } from '../../src/core/types.js';
import { createCancelToken } from '../../src/core/cancel.js';
import { AbortError, ApiError, ConfigError, HttpError, isChannelError, TimeoutError, TokenProviderError } from '../../src/errors/index.js';
import { isRetryable } from '../../src/core/requests/is-retryable.js';
import { makeJwt, type FakeService } from '../helpers/fake-service.js';
import { collectStrings } from '../helpers/scan.js';
import { sendJson, startServer } from '../helpers/server.js';
import { captureTimerThrows } from '../helpers/uncaught.js';
import { closedAfterEach, fakeServices } from './suite.js';

export type ClientFactory = (options: CoreClientOptions) => Client;

/** A server whose every request waits for the test to answer it; it records closed connections. */
async function startGate() {
  const waiting: Array<{ req: IncomingMessage; res: ServerResponse }> = [];
  let closed = 0;
  let arrived: () => void = () => {};
  const server = await startServer((req, res) => {
    res.on('close', () => {
      if (!res.writableEnded) closed++;
    });
    waiting.push({ req, res });
    arrived();
  });
  return {
    ...server,
    waiting,
    closed: () => closed,
    /** Resolves once `n` requests have arrived in all. */
    until: (n: number) =>
      new Promise<void>((resolve) => {
        const check = () => (waiting.length >= n ? resolve() : (arrived = check));
        check();
      }),
  };
}

const tick = (ms = 0) => new Promise((resolve) => setTimeout(resolve, ms));

/** Two kinds of signal: the platform's AbortController and the SDK's own cancel token. */
const signals: Array<[string, () => { signal: SignalLike; cancel(reason?: unknown): void }]> = [
  [
    'AbortController',
    () => {
      const c = new AbortController();
      return { signal: c.signal, cancel: (reason) => c.abort(reason) };
    },
  ],
  ['createCancelToken', () => createCancelToken()],
];

export function promisesSuite(name: string, createClient: ClientFactory): void {
  describe(`promises (#11): ${name}`, () => {
    const closing = closedAfterEach();
    const fake = fakeServices();
    const gate = async () => closing(await startGate());

    describe('1. logout fences requests under way', () => {
      /** A provider for "the signed-in user", switched by the test as a logout/login would. */
      function session(service: FakeService) {
        const state = { user: 'alice', calls: [] as string[] };
        const tokenProvider = async () => {
          state.calls.push(state.user);
          return service.issue(state.user);
        };
        return { state, tokenProvider };
      }
      const userOf = (_service: FakeService, token: string | undefined) =>
        token === undefined ? undefined : (JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as { sub: string }).sub;

      test("a POST sent with A's token that gets 401 after clearToken() is never replayed with B's token", async () => {
        const service = await fake();
        const { state, tokenProvider } = session(service);
        const client = createClient({ baseUrl: service.url, tokenProvider });
        // The POST waits at the service's gate until the logout is done, then gets its 401.
        const post = client.post('/late401/gate', { json: { transfer: 100 } }).catch((e: unknown) => e);
        await service.gate.arrived();
        client.clearToken();
        state.user = 'bob';
        service.expireAll();
        await client.get('/whoami');
        const error = await post;
        expect(error).toBeInstanceOf(AbortError);
        expect((error as Error).message).toMatch(/clearToken\(\) ran while this request was under way/);
        service.gate.open();
        await vi.waitFor(() => expect(service.hits.some((h) => h.method === 'POST')).toBe(true));
        await tick(100); // room for a replay, which must not come
        const posts = service.hits.filter((h) => h.method === 'POST');
        expect(posts.map((h) => userOf(service, h.token))).toEqual(['alice']);
        expect(service.hits.filter((h) => h.path === '/whoami').map((h) => userOf(service, h.token))).toEqual(['bob']);
      });

      test('a GET in backoff during the logout is not retried, with any token', async () => {
        const service = await fake();
        const { state, tokenProvider } = session(service);
        // A backoff longer than the test's own timeout: the request must fail at the clear.
        const client = createClient({ baseUrl: service.url, tokenProvider, retry: { delay: () => 60_000 } });
        const retries: number[] = [];
        client.on('retry', (e) => retries.push(e.attempt));
        const get = client.get('/flaky/5').catch((e: unknown) => e);
        await vi.waitFor(() => expect(retries).toEqual([2]));
        client.clearToken();
        state.user = 'bob';
        expect(await get).toBeInstanceOf(AbortError);
        await tick(50);
        expect(service.hits.filter((h) => h.path === '/flaky/5')).toHaveLength(1);
      });

      test('a request waiting on the provider when clearToken() runs is never sent with the discarded token', async () => {
        const service = await fake();
        let release: (token: string) => void = () => {};
        const provided: string[] = [];
        const client = createClient({
          baseUrl: service.url,
          tokenProvider: () => new Promise<string>((resolve) => (release = (t) => (provided.push(t), resolve(t)))),
        });
        const waiting = client.get('/a').catch((e: unknown) => e);
        const tokenWaiter = client.getToken().catch((e: unknown) => e);
        await tick(10);
        client.clearToken();
        release(service.issue('alice'));
        expect(await waiting).toBeInstanceOf(AbortError);
        expect(await tokenWaiter).toBeInstanceOf(AbortError);
        const after = client.get('/b');
        await tick(10);
        release(service.issue('bob'));
        await after;
        expect(service.hits.map((h) => [h.path, h.token])).toEqual([['/b', provided[1]]]);
      });

      for (const [kind, make] of signals) {
        test(`#42 item 2: ${kind}: a call given the signal of a call clearToken() ended (a stack's retry) fails at once, unsent, no provider call; other signals unaffected`, async () => {
          const service = await fake();
          const { state, tokenProvider } = session(service);
          const client = createClient({ baseUrl: service.url, tokenProvider, retry: { delay: () => 60_000 } });
          const done = make();
          await client.get('/before', { signal: done.signal });
          const retried = make();
          const first = client.get('/flaky/5', { signal: retried.signal }).catch((e: unknown) => e);
          await vi.waitFor(() => expect(service.hits.filter((h) => h.path === '/flaky/5')).toHaveLength(1));
          client.clearToken();
          expect(await first).toBeInstanceOf(AbortError);
          // The stack retries at once, while Alice's session is still alive at her backend.
          const again = (await client.get('/flaky/5', { signal: retried.signal }).catch((e: unknown) => e)) as AbortError;
          expect([again instanceof AbortError, again.code, /give each new call its own signal/.test(again.message)]).toEqual([true, 'ABORTED', true]);
          expect(state.calls).toEqual(['alice']);
          state.user = 'bob';
          // A signal of a call that had ended before the clear, and a new one, are as good as ever.
          await client.get('/whoami', { signal: done.signal });
          await client.get('/whoami', { signal: make().signal });
          expect(state.calls).toEqual(['alice', 'bob']);
          expect(service.hits.map((h) => [h.path, userOf(service, h.token)])).toEqual([
            ['/before', 'alice'],
            ['/flaky/5', 'alice'],
            ['/whoami', 'bob'],
            ['/whoami', 'bob'],
          ]);
        });
      }

      test('a forced refresh in flight across clearToken() installs nothing', async () => {
        const service = await fake();
        const { state, tokenProvider } = session(service);
        const client = createClient({ baseUrl: service.url, tokenProvider });
        const first = await client.getToken();
        const forced = client.getToken({ forceRefresh: true }).catch((e: unknown) => e);
        client.clearToken();
        state.user = 'bob';
        expect(await forced).toBeInstanceOf(AbortError);
        const next = await client.getToken();
        expect(next).not.toBe(first);
        expect(userOf(service, next)).toBe('bob');
      });
    });

    describe('2. both kinds of signal abort at every stage, dropping the connection', () => {
      for (const [kind, make] of signals) {
        test(`${kind}: on the wire -> AbortError, the connection is closed, never resolved with data`, async () => {
          const server = await gate();
          const client = createClient({ baseUrl: server.url, tokenProvider: () => makeJwt({ iat: 1, exp: 2e9 }) });
          const cancel = make();
          const pending = client.get('/held', { signal: cancel.signal });
          await server.until(1);
          cancel.cancel('page closed');
          // The server answers right after the cancel: the client must not resolve with it.
          sendJson(server.waiting[0].res, 200, { code: 0, data: 'late' });
          const error = await pending.catch((e: unknown) => e);
          expect(error).toBeInstanceOf(AbortError);
          expect((error as AbortError).cause).toBe('page closed');
        });

        test(`${kind}: on the wire with no answer -> the server sees the connection dropped`, async () => {
          const server = await gate();
          const client = createClient({ baseUrl: server.url, tokenProvider: () => makeJwt({ iat: 1, exp: 2e9 }) });
          const cancel = make();
          const pending = client.get('/held', { signal: cancel.signal });
          await server.until(1);
          cancel.cancel();
          await expect(pending).rejects.toBeInstanceOf(AbortError);
          for (let i = 0; i < 50 && server.closed() === 0; i++) await tick(10);
          expect(server.closed()).toBe(1);
        });

        test(`${kind}: while waiting for the token, during backoff, and before the start`, async () => {
          await atEveryStage(make, (pending) => expect(pending).rejects.toBeInstanceOf(AbortError));
        });
      }

      /** A call stopped by its signal while it waits for the token, during backoff, and before it starts: each ends as `check` says; only the one in backoff was sent. */
      async function atEveryStage(make: (typeof signals)[number][1], check: (pending: Promise<unknown>) => Promise<void>) {
        const service = await fake();
        let release: () => void = () => {};
        const client = createClient({
          baseUrl: service.url,
          tokenProvider: () => new Promise<string>((resolve) => (release = () => resolve(service.issue()))),
          retry: { delay: () => 5000 },
        });
        const waiting = make();
        const a = client.get('/a', { signal: waiting.signal });
        await tick(5);
        waiting.cancel();
        await check(a);
        release();
        const backoff = make();
        const b = client.get('/flaky/3', { signal: backoff.signal });
        for (let i = 0; i < 50 && service.hits.length === 0; i++) await tick(10);
        backoff.cancel();
        await check(b);
        const before = make();
        before.cancel();
        await check(client.get('/c', { signal: before.signal }));
        expect(service.hits.map((h) => h.path)).toEqual(['/flaky/3']);
      }

      test('#42 item 4: a signal that timed out (AbortSignal.timeout(), a TimeoutError reason) is a TimeoutError at every stage, retryable', async () => {
        const server = await gate();
        const expectTimeout = async (pending: Promise<unknown>) => {
          const error = (await pending.catch((e: unknown) => e)) as TimeoutError;
          expect([error instanceof TimeoutError, error.code, (error.cause as Error).name, isRetryable(error)]).toEqual([true, 'TIMEOUT', 'TimeoutError', true]);
        };
        // On the wire: AbortSignal.timeout() itself.
        const onWire = createClient({ baseUrl: server.url, tokenProvider: () => makeJwt({ iat: 1, exp: 2e9 }) });
        await expectTimeout(onWire.get('/held', { signal: AbortSignal.timeout(50) }));
        const timedOut = () => {
          const c = new AbortController();
          return { signal: c.signal, cancel: () => c.abort(new DOMException('signal timed out', 'TimeoutError')) };
        };
        await atEveryStage(timedOut, expectTimeout);
      });

      test('many requests sharing one signal add one listener to it, and all abort', async () => {
        const server = await gate();
        const client = createClient({ baseUrl: server.url, tokenProvider: () => makeJwt({ iat: 1, exp: 2e9 }) });
        const controller = new AbortController();
        let listeners = 0;
        const add = controller.signal.addEventListener.bind(controller.signal);
        controller.signal.addEventListener = ((...args: Parameters<typeof add>) => (listeners++, add(...args))) as typeof add;
        // 12: past Node's warning threshold of 10 listeners, and past WeChat's 10 requests at once.
        const pending = Array.from({ length: 12 }, (_, i) => client.get('/x/' + i, { signal: controller.signal }));
        // 9 reach the server on every transport: a mini-program host keeps one of its 10 slots for the
        // tokenProvider's own request (waiting for a 10th held this test for the attempts' 10-s timeout).
        await server.until(9);
        expect(listeners).toBe(1);
        controller.abort();
        const results = await Promise.allSettled(pending);
        expect(results.every((r) => r.status === 'rejected' && r.reason instanceof AbortError)).toBe(true);
      });
    });

    describe('3. no token in error bodies, events or messages', () => {
      test('an envelope and an HTTP error echoing the credential: redacted everywhere, before truncation', async () => {
        const token = makeJwt({ iat: 1, exp: 2e9, pad: 'x'.repeat(300) });
        const server = await startServer((req, res) => {
          const auth = String(req.headers.authorization);
          if (req.url === '/envelope')
            return sendJson(res, 200, { code: 40001, message: 'bad credential ' + auth, data: { echoed: auth, nested: [auth.slice(7)] } });
          // The token straddles the 1,000-character cut of HttpError.body.
          res.writeHead(400, { 'content-type': 'text/plain' }).end('x'.repeat(1000 - 100) + auth.slice(7) + 'y'.repeat(500));
        });
        closing(server);
        const client = createClient({ baseUrl: server.url, tokenProvider: () => token });
        const seen: unknown[] = [];
        client.on('*', (_type, payload) => seen.push(payload));
        const api = await client.get('/envelope').catch((e: unknown) => e);
        const http = await client.get('/http', { retry: 0 }).catch((e: unknown) => e);
        expect(api).toBeInstanceOf(ApiError);
        expect(http).toBeInstanceOf(HttpError);
        expect((api as ApiError).body).toMatchObject({ code: 40001, data: { echoed: 'Bearer [token]', nested: ['[token]'] } });
        expect((http as HttpError).body).toHaveLength(1000);
        const strings = collectStrings([api, http, seen]);
        for (let i = 0; i + 24 <= token.length; i += 8) {
          const piece = token.slice(i, i + 24);
          expect(strings.filter((s) => s.includes(piece))).toEqual([]);
        }
      });

      test("a provider error quoting a JWT is redacted in the TokenProviderError and the 'token:error' event", async () => {
        const leaked = makeJwt({ iat: 1, exp: 2e9 });
        const service = await fake();
        const client = createClient({
          baseUrl: service.url,
          tokenProvider: () => Promise.reject(new Error('backend said: refresh failed for ' + leaked)),
        });
        const events: unknown[] = [];
        client.on('token:error', (e) => events.push(e));
        const error = await client.get('/a').catch((e: unknown) => e);
        expect(error).toBeInstanceOf(TokenProviderError);
        expect((error as Error).message).toMatch(/refresh failed for \[token\]/);
        expect(collectStrings([(error as Error).message, (error as Error).stack, events]).some((s) => s.includes(leaked))).toBe(false);
      });
    });

    test('5. a throwing listener does not silence later listeners of that event or the * listeners', async () => {
      const service = await fake();
      const client = createClient({ baseUrl: service.url, tokenProvider: () => service.issue() });
      const heard: string[] = [];
      const uncaught = await captureTimerThrows(async (wait) => {
        client.on('request', () => {
          throw new Error('listener bug (provoked by the test)');
        });
        client.on('request', () => heard.push('second request listener'));
        client.on('*', (type) => heard.push('* ' + String(type)));
        await client.get('/a');
        await wait(20);
      });
      expect(uncaught.map((e) => (e as Error).message)).toEqual(['listener bug (provoked by the test)']);
      expect(heard).toContain('second request listener');
      expect(heard).toContain('* request');
      expect(heard).toContain('* response');
    });

    describe('6. every failure is a ChannelError and emits `error`', () => {
      test.each([
        ['a TokenProviderError', (c: Client) => c.get('/a'), 'TOKEN_PROVIDER_ERROR'],
        ['a bad request option', (c: Client) => c.get('/a', { data: 1 } as never), 'CONFIG_ERROR'],
        ['json that cannot be serialised (BigInt)', (c: Client) => c.post('/a', { json: { n: 1n } }), 'CONFIG_ERROR'],
      ])('%s', async (_label, call, code) => {
        const service = await fake();
        const client = createClient({ baseUrl: service.url, tokenProvider: () => Promise.reject(new Error('down')) });
        const events: Array<ClientEvents['error']> = [];
        client.on('error', (e) => events.push(e));
        const error = await call(client).catch((e: unknown) => e);
        expect(isChannelError(error)).toBe(true);
        expect((error as { code: string }).code).toBe(code);
        expect(events).toHaveLength(1);
        expect(events[0]).toMatchObject({ requestId: 1, method: expect.stringMatching(/GET|POST/), url: expect.stringContaining('/a'), error });
      });
    });

    describe('10. programming errors are ConfigErrors before anything is sent, never retried', () => {
      test.each([
        ['CR/LF in a header value', { headers: { 'x-note': 'a\r\nx-injected: 1' } }, /headers\.x-note contains a line break/],
        ['an invalid header name', { headers: { 'bad header': '1' } }, /"bad header" is not a valid header name/],
        ['a body on GET', { body: 'x' }, /GET requests have no body/],
        ['method given to get()', { method: 'POST' }, /method is set by get\(\)/],
      ])('%s', async (_label, options, message) => {
        const service = await fake();
        let provided = 0;
        const client = createClient({ baseUrl: service.url, tokenProvider: () => (provided++, service.issue()) });
        const error = await client.get('/a', options as never).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(ConfigError);
        expect((error as Error).message).toMatch(message);
        expect(provided).toBe(0);
        expect(service.hits).toHaveLength(0);
      });

      test('credentials in baseUrl are refused, and the password is in no message', () => {
        const error = (() => {
          try {
            createClient({ baseUrl: 'https://partner:hunter2@api.example.com', tokenProvider: () => 'a.b.c' });
          } catch (e) {
            return e;
          }
        })();
        expect(error).toBeInstanceOf(ConfigError);
        expect((error as Error).message).toMatch(/must not contain a user name or password/);
        expect(collectStrings(error).some((s) => s.includes('hunter2'))).toBe(false);
      });
    });

    describe('11. option types are refused with messages; delays past the timer limit end the retries', () => {
      const base = { baseUrl: 'https://api.example.com', tokenProvider: () => 'a.b.c' };
      test.each([
        ['refreshLeeway null', { refreshLeeway: null }, /refreshLeeway must be a number of seconds/],
        ['refreshLeeway true', { refreshLeeway: true }, /refreshLeeway must be a number of seconds/],
        ['refreshLeeway "60"', { refreshLeeway: '60' }, /refreshLeeway must be a number of seconds/],
        ['refreshLeeway []', { refreshLeeway: [] }, /refreshLeeway must be a number of seconds/],
        ['retry.limit null', { retry: { limit: null } }, /retry\.limit must be a whole number/],
        ['retry.limit true', { retry: { limit: true } }, /retry\.limit must be a whole number/],
        ['retry.limit "2"', { retry: { limit: '2' } }, /retry\.limit must be a whole number/],
        ['string statusCodes', { retry: { statusCodes: ['503'] } }, /retry\.statusCodes must be an array of HTTP statuses/],
        [
          'maxRetryAfter past the timer limit',
          { retry: { maxRetryAfter: 2 ** 31 } },
          /retry\.maxRetryAfter must be a number of milliseconds from 0 to 2147483647/,
        ],
      ])('%s', (_label, extra, message) => {
        expect(() => createClient({ ...base, ...extra } as never)).toThrow(message);
      });

      test('a Retry-After beyond 2^31-1 ms ends the retries at once (never a 1 ms retry)', async () => {
        const service = await fake();
        const client = createClient({ baseUrl: service.url, tokenProvider: () => service.issue(), retry: { maxRetryAfter: 2147483647 } });
        const error = await client.get('/retry-after/3000000').catch((e: unknown) => e);
        expect(error).toBeInstanceOf(HttpError);
        await tick(50);
        expect(service.hits).toHaveLength(1);
      });
    });

    describe('12. URL edges', () => {
      test('/../ never climbs above the baseUrl path; a fragment is refused; colons and default ports are fine', async () => {
        const server = await startServer((req, res) => sendJson(res, 200, { code: 0, data: req.url }));
        closing(server);
        const client = createClient({ baseUrl: server.url + '/gw', tokenProvider: () => makeJwt({ iat: 1, exp: 2e9 }) });
        await expect(client.get('/../admin')).rejects.toThrow(/climbs above baseUrl/);
        await expect(client.get('/a/%2e%2e/%2E%2E/admin')).rejects.toThrow(/climbs above baseUrl/);
        await expect(client.get('/a#frag', { searchParams: { q: 1 } })).rejects.toThrow(/has a fragment/);
        expect(await client.get('/a/../b/./c')).toBe('/gw/b/c');
        expect(await client.get('orders:batchGet')).toBe('/gw/orders:batchGet');
        const https = createClient({ baseUrl: 'https://api.example.com', tokenProvider: () => Promise.reject(new Error('stop')) });
        await expect(https.get('https://api.example.com:443/x')).rejects.toBeInstanceOf(TokenProviderError);
        await expect(https.get('https://API.example.com/x')).rejects.toBeInstanceOf(TokenProviderError);
        await expect(https.get('https://api.example.com:8443/x')).rejects.toThrow(/refusing to send the token/);
      });
    });

    test('13. HEAD and 204 resolve to undefined', async () => {
      const server = await startServer((req, res) => {
        if (req.url === '/no-content') return void res.writeHead(204).end();
        res.writeHead(200, { 'content-type': 'application/json', 'x-total': '3' }).end(req.method === 'HEAD' ? undefined : '{"code":0,"data":1}');
      });
      closing(server);
      const client = createClient({ baseUrl: server.url, tokenProvider: () => makeJwt({ iat: 1, exp: 2e9 }) });
      await expect(client.request('/x', { method: 'HEAD' })).resolves.toBeUndefined();
      await expect(client.delete('/no-content')).resolves.toBeUndefined();
      await expect(client.get('/x')).resolves.toBe(1);
    });

    test('14. a request whose signal is already aborted makes no provider call', async () => {
      const service = await fake();
      let provided = 0;
      const client = createClient({ baseUrl: service.url, tokenProvider: () => (provided++, service.issue()) });
      for (const [, make] of signals) {
        const cancel = make();
        cancel.cancel();
        await expect(client.get('/a', { signal: cancel.signal })).rejects.toBeInstanceOf(AbortError);
      }
      expect(provided).toBe(0);
    });
  });
}
