/**
 * Every failure of getToken is a TokenExchangeError or a ConfigError with the right message, and a
 * caller's signal detaches that caller only: the shared call goes on for the others.
 */
import { afterEach, expect, test } from 'vitest';
import { ConfigError, createTokenExchange, TokenExchangeError } from '../../../src/server-node.js';
import { makeJwt } from '../../helpers/fake-service.js';
import { startServer, type TestServer } from '../../helpers/server.js';
import { accessKey, endpoint, secretKey } from './token-endpoint.js';

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error as Error,
  );

test.each([false, true])(
  "the shared call does not inherit the first caller's signal (forceRefresh: %s): its abort detaches only that caller",
  async (forceRefresh) => {
    const service = await endpoint({ delayMs: 100 });
    const exchange = createTokenExchange({ baseUrl: service.url, accessKey, secretKey });
    const controller = new AbortController();
    const first = failure(exchange.getToken('u', { forceRefresh, signal: controller.signal }));
    const second = exchange.getToken('u', { forceRefresh });
    const third = exchange.getToken('u', { forceRefresh, signal: new AbortController().signal });
    await sleep(20);
    controller.abort();
    const error = await first;
    expect(error).toBeInstanceOf(TokenExchangeError);
    expect(error?.message).toMatch(/getToken was aborted by its signal; the token call goes on for other callers/);
    expect((error as Error & { cause?: unknown }).cause).toBe(controller.signal.reason);
    const [a, b] = await Promise.all([second, third]);
    expect(a).toEqual(b);
    expect(service.calls).toHaveLength(1);
  },
);

test('an aborted signal reads as an abort (not "could not reach"); one aborted before the call sends nothing', async () => {
  const service = await endpoint({ delayMs: 200 });
  const exchange = createTokenExchange({ baseUrl: service.url, accessKey, secretKey });
  const timedOut = await failure(exchange.getToken('u', { signal: AbortSignal.timeout(20) }));
  expect(timedOut?.message).toMatch(/getToken was aborted by its signal \(the signal timed out\)/);
  expect(timedOut?.message).not.toMatch(/could not reach/);
  const before = await failure(exchange.getToken('v', { signal: AbortSignal.abort() }));
  expect(before).toBeInstanceOf(TokenExchangeError);
  expect(before?.message).toMatch(/aborted by its signal/);
  await sleep(250);
  expect(service.calls.map((c) => c.user)).toEqual(['u']); // u's call went on (and filled the cache); v was never sent
});

test('a stalled response body is bounded by timeout: TokenExchangeError, not a raw DOMException', async () => {
  const server = await startServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"code":0,"data":'); // and nothing more
  });
  servers.push(server);
  // A second: the headers come at once, but a busy machine can take more than a few ms to read them.
  const exchange = createTokenExchange({ baseUrl: server.url, accessKey, secretKey, timeout: 1000 });
  const error = await failure(exchange.getToken('u'));
  expect(error).toBeInstanceOf(TokenExchangeError);
  expect(error?.message).toMatch(
    /the token endpoint http:\/\/127\.0\.0\.1:\d+\/open\/api\/v1\/sdk\/tokens did not send the whole body of its HTTP 200 answer within 1000 ms \(timeout\)/,
  );
  expect((error as TokenExchangeError).status).toBe(200);
});

test('a fetch or sign function that never settles is bounded by timeout too', async () => {
  const hanging = () => new Promise<never>(() => {});
  const viaFetch = createTokenExchange({ baseUrl: 'https://channel.example', accessKey, secretKey, timeout: 50, fetch: hanging });
  await expect(viaFetch.getToken('u')).rejects.toThrow(
    /the token endpoint https:\/\/channel\.example\/open\/api\/v1\/sdk\/tokens did not answer within 50 ms \(timeout\)/,
  );
  const viaSign = createTokenExchange({ baseUrl: 'https://channel.example', accessKey, secretKey, timeout: 50, sign: hanging });
  await expect(viaSign.getToken('u')).rejects.toThrow(/did not get a signed request \(the sign function is slow\) within 50 ms/);
});

test('a sign function that throws: TokenExchangeError without the secret', async () => {
  const exchange = createTokenExchange({
    baseUrl: 'https://channel.example',
    accessKey,
    secretKey,
    sign: ({ secretKey: sk }) => {
      throw new Error('bad key ' + sk);
    },
  });
  const error = await failure(exchange.getToken('u'));
  expect(error).toBeInstanceOf(TokenExchangeError);
  expect(error?.message).toMatch(/the sign function failed: Error: bad key \[secret\]/);
  expect(JSON.stringify({ ...error, message: error?.message, stack: error?.stack })).not.toContain(secretKey);
});

test('envelope code "0" is success, as on the client entry', async () => {
  const service = await endpoint({ answer: () => [200, { code: '0', data: { access_token: makeJwt({}), expires_in: 900, token_type: 'Bearer' } }] });
  const exchange = createTokenExchange({ baseUrl: service.url, accessKey, secretKey });
  await expect(exchange.getToken('u')).resolves.toMatchObject({ expiresIn: 900, tokenType: 'Bearer' });
});

test.each([
  [{ timeout: Number.NaN }, /timeout must be a number of milliseconds from 1 to 2147483647 \(e\.g\. 10000\); got NaN/],
  [{ timeout: -1 }, /timeout must be .*; got -1/],
  [{ timeout: 0 }, /timeout must be .*; got 0/],
  [{ timeout: '5000' }, /timeout must be .*; got "5000"/],
  [{ timeout: Infinity }, /timeout must be .*; got Infinity/],
  [{ timeout: 2 ** 31 }, /timeout must be .*; got 2147483648/],
  [{ cacheMargin: -1 }, /cacheMargin must be a number of seconds, 0 or more \(e\.g\. 60\); got -1/],
  [{ cacheMargin: Number.NaN }, /cacheMargin must be .*; got NaN/],
  [{ cacheMargin: '60' }, /cacheMargin must be .*; got "60"/],
  [{ cachemargin: 60 }, /unknown createTokenExchange option "cachemargin"; did you mean "cacheMargin"\?/],
  [{ cacheTimout: 100 }, /unknown createTokenExchange option "cacheTimout"; did you mean "cacheTimeout"\?/],
  [{ forceRefreshWindows: 100 }, /did you mean "forceRefreshWindow"\?/],
  [{ cacheTimeout: 0 }, /cacheTimeout must be a number of milliseconds from 1 to 2147483647 \(e\.g\. 200\); got 0/],
  [{ cacheTimeout: '200' }, /cacheTimeout must be .*; got "200"/],
  [{ cacheCooldown: -1 }, /cacheCooldown must be a number of milliseconds from 0 to 2147483647 \(e\.g\. 5000\); got -1/],
  [{ forceRefreshWindow: Number.NaN }, /forceRefreshWindow must be a number of milliseconds from 0 .*; got NaN/],
  [{ cache: {} }, /cache must be an object with get\(key\) and set\(key, value, ttlMs\) methods/],
  [{ cache: { get() {}, set() {}, lock: true } }, /cache must be an object/],
  [{ onCacheError: 'log' }, /onCacheError must be a function; got "log"/],
  [{ fetch: {} }, /fetch must be a function; got an object/],
])('bad option %o -> ConfigError at construction', (bad, message) => {
  const make = () => createTokenExchange({ baseUrl: 'https://channel.example', accessKey, secretKey, ...(bad as object) });
  expect(make).toThrow(ConfigError);
  expect(make).toThrow(message);
});

test('a signal that is not an AbortSignal -> ConfigError', async () => {
  const exchange = createTokenExchange({ baseUrl: 'https://channel.example', accessKey, secretKey });
  await expect(exchange.getToken('u', { signal: 'stop' as never })).rejects.toThrow(/signal must be an AbortSignal; got "stop"/);
});

test('many getToken calls sharing one signal add one listener to it (no MaxListenersExceededWarning)', async () => {
  let release: (r: Response) => void = () => {};
  const exchange = createTokenExchange({
    baseUrl: 'https://channel.example.com',
    accessKey: 'ak',
    secretKey: 'sk',
    fetch: () => new Promise<Response>((resolve) => (release = resolve)),
  });
  const controller = new AbortController();
  let listeners = 0;
  const add = controller.signal.addEventListener.bind(controller.signal);
  controller.signal.addEventListener = ((...args: Parameters<typeof add>) => (listeners++, add(...args))) as typeof add;
  const calls = Array.from({ length: 20 }, (_, i) => exchange.getToken('user-' + (i % 2), { signal: controller.signal }));
  await new Promise((resolve) => setTimeout(resolve, 10));
  expect(listeners).toBe(1);
  controller.abort();
  const results = await Promise.allSettled(calls);
  expect(results.every((r) => r.status === 'rejected' && /aborted by its signal/.test(String((r.reason as Error).message)))).toBe(true);
  release(new Response('{}'));
});
