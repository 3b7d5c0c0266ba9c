// @vitest-environment node
// isRetryable (issue #32), both entries: whether an error is worth another try by a caller with a
// retry of its own (TanStack Query's `retry`). The SDK's errors as real calls produce them, and as
// other libraries wrap them.
import { describe, expect, test } from 'vitest';
import {
  AbortError,
  ApiError,
  ConfigError,
  createClient,
  isRetryable,
  NetworkError,
  TimeoutError,
  TokenProviderError,
  UnauthorizedError,
} from '../../src/index.js';
import { isRetryable as isRetryableMiniProgram } from '../../src/miniprogram.js';
import { fakeServices, providerFor } from '../conformance/suite.js';

const start = fakeServices();

describe('isRetryable', () => {
  test('the errors real calls end with: true for a network failure, a timeout and 408/429/5xx; false for the rest', async () => {
    const service = await start();
    const client = createClient({ baseUrl: service.url, tokenProvider: providerFor(service), retry: 0 });
    const failing = createClient({
      baseUrl: service.url,
      tokenProvider: () => {
        throw new Error('backend down');
      },
    });
    const controller = new AbortController();
    controller.abort();
    const settle = (p: Promise<unknown>) =>
      p.then(
        () => 'resolved',
        (e: unknown) => e,
      );
    const statuses = await Promise.all([400, 403, 404, 408, 409, 422, 429, 500, 502, 503, 504].map((s) => settle(client.get('/status/' + s))));
    expect(statuses.map((e) => [(e as { status: number }).status, isRetryable(e)])).toEqual([
      [400, false],
      [403, false],
      [404, false],
      [408, true],
      [409, false],
      [422, false],
      [429, true],
      [500, true],
      [502, true],
      [503, true],
      [504, true],
    ]);
    service.rejectAll(true);
    const unauthorized = await settle(client.get('/denied'));
    service.rejectAll(false);
    const others = {
      unauthorized,
      envelope: await settle(client.get('/envelope/7')),
      config: await settle(client.get('https://evil.example/x')),
      aborted: await settle(client.get('/a', { signal: controller.signal })),
      provider: await settle(failing.get('/a')),
      timeout: await settle(client.get('/slow/2000', { timeout: 200 })),
      network: await settle(createClient({ baseUrl: 'http://127.0.0.1:9', tokenProvider: () => service.issue(), retry: 0 }).get('/a')),
    };
    expect(others.unauthorized).toBeInstanceOf(UnauthorizedError);
    expect(others.envelope).toBeInstanceOf(ApiError);
    expect(others.config).toBeInstanceOf(ConfigError);
    expect(others.aborted).toBeInstanceOf(AbortError);
    expect(others.provider).toBeInstanceOf(TokenProviderError);
    expect(others.timeout).toBeInstanceOf(TimeoutError);
    expect(others.network).toBeInstanceOf(NetworkError);
    expect(Object.fromEntries(Object.entries(others).map(([name, e]) => [name, isRetryable(e)]))).toEqual({
      unauthorized: false,
      envelope: false,
      config: false,
      aborted: false,
      provider: false,
      timeout: true,
      network: true,
    });
  });

  test('the call’s signal timing out while the caller reads client.fetch’s body (a queryFn’s response.json()): the TimeoutError fetch gives there is retryable too', async () => {
    const service = await start();
    const client = createClient({ baseUrl: service.url, tokenProvider: providerFor(service) });
    // The headers come at once, then 1 KiB every 20 ms for 20 s: the signal times out mid-body, with
    // the reason AbortSignal.timeout() gives (aborted by hand once the headers are in: no race with a
    // busy machine's connect).
    const timing = new AbortController();
    const response = await client.fetch('/slow-download/1048576/20', { signal: timing.signal });
    expect(response.status).toBe(200);
    // While the read is under way (undici ends a read that starts after the abort with a plain AbortError).
    const read = response.arrayBuffer().then(
      () => 'resolved',
      (e: unknown) => e,
    );
    setTimeout(() => timing.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), 40);
    const error = (await read) as Error;
    // fetch's own reason, as a bare fetch gives it (the SDK keeps the signal's reason)...
    expect(error.name).toBe('TimeoutError');
    // ...and, as the SDK's TimeoutError for the same signal before the headers, worth another try.
    // Before: false, so TanStack Query's retry: isRetryable gave up on a timeout it retries elsewhere.
    expect(isRetryable(error)).toBe(true);
    expect(isRetryable({ message: 'wrapped', cause: error })).toBe(true);
    // A signal aborted by hand (an AbortError) stays not retryable.
    const controller = new AbortController();
    const aborted = await client.fetch('/slow-download/1048576/20', { signal: controller.signal });
    controller.abort();
    expect(
      isRetryable(
        await aborted.arrayBuffer().then(
          () => 'resolved',
          (e: unknown) => e,
        ),
      ),
    ).toBe(false);
  });

  test('an SDK error wrapped by another library (its cause) is read; a status where there is one (Response, status, statusCode, axios response)', () => {
    const network = new NetworkError('lost', { method: 'GET', url: 'https://x.example/a' });
    const config = new ConfigError('bad option');
    const wrapped = (cause: unknown, depth = 1): unknown => (depth ? { message: 'wrapped', cause: wrapped(cause, depth - 1) } : cause);
    expect(isRetryable(wrapped(network))).toBe(true);
    expect(isRetryable(wrapped(network, 4))).toBe(true);
    // The cause is looked for a few levels down, no further (a cycle ends there too).
    expect(isRetryable(wrapped(network, 6))).toBe(false);
    const cycle: { cause?: unknown } = {};
    cycle.cause = cycle;
    expect(isRetryable(cycle)).toBe(false);
    // The SDK's own code wins over a status a wrapper adds.
    expect(isRetryable(Object.assign(new Error('x'), { status: 503, cause: config }))).toBe(true);
    expect(isRetryable({ cause: config, status: 503 })).toBe(true);
    expect(isRetryable(wrapped(config))).toBe(false);
    expect(isRetryable(new Response(null, { status: 503 }))).toBe(true);
    expect(isRetryable(new Response(null, { status: 401 }))).toBe(false);
    expect(isRetryable({ statusCode: 429 })).toBe(true);
    expect(isRetryable({ response: { status: 502 } })).toBe(true);
    expect(isRetryable({ response: { status: 404 } })).toBe(false);
  });

  test('a value of any other type is not retryable, and nothing throws', () => {
    const values: unknown[] = [undefined, null, 0, 503, '503', true, Symbol('x'), () => 503, [], {}, { status: '503' }, { status: 600 }, Object.create(null)];
    expect(values.map((v) => isRetryable(v))).toEqual(values.map(() => false));
  });

  test('the mini-program entry exports the same function', () => {
    expect(isRetryableMiniProgram).toBe(isRetryable);
  });
});
