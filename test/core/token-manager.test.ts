// Unit tests of the token manager with an injected clock: no HTTP, no timers of consequence.
import { expect, test } from 'vitest';
import { createTokenManager, type HeldToken } from '../../src/core/token-manager.js';
import { TokenProviderError } from '../../src/errors/index.js';
import { makeJwt } from '../helpers/fake-service.js';

function setup(options: { lifetime?: number; leeway?: number; provider?: (forced: boolean) => Promise<string> } = {}) {
  let t = 1_000_000;
  const calls: boolean[] = [];
  const events: string[] = [];
  const lifetime = options.lifetime ?? 900;
  const manager = createTokenManager({
    provider: ({ forceRefresh }) => {
      calls.push(forceRefresh);
      return options.provider ? options.provider(forceRefresh) : Promise.resolve(makeJwt({ iat: 5, exp: 5 + lifetime, n: calls.length }));
    },
    tokenTimeout: 1000,
    refreshLeeway: options.leeway ?? 60,
    now: () => t,
    onToken: (reason, held) => events.push(`${reason}:${held.version}`),
    onError: (reason) => events.push(`error:${reason}`),
    redact: { text: (text) => text, cause: (thrown) => thrown },
  });
  return { manager, calls, events, advance: (ms: number) => void (t += ms), now: () => t };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

test('the refresh point is refreshLeeway before expiry, never earlier than half the lifetime', async () => {
  const long = setup({ lifetime: 900, leeway: 60 });
  const a = await long.manager.get();
  expect(a.expiresAt - long.now()).toBe(900_000);
  expect(a.expiresAt - a.refreshAt).toBe(60_000);
  const short = setup({ lifetime: 2, leeway: 60 });
  const b = await short.manager.get();
  expect(b.expiresAt - b.refreshAt).toBe(1000);
});

test('inside the leeway the held token is still used while one forced refresh runs in the background', async () => {
  const { manager, calls, advance, events } = setup();
  const first = (await manager.get()) as HeldToken;
  advance(850_000);
  expect(manager.get()).toBe(first);
  expect(manager.get()).toBe(first);
  expect(calls).toEqual([false, true]);
  await settle();
  expect((manager.get() as HeldToken).version).toBe(2);
  expect(events).toEqual(['initial:1', 'proactive:2']);
});

test('a failed background refresh keeps the valid token and backs off instead of calling on every request', async () => {
  let fail = false;
  const { manager, calls, advance, events } = setup({
    provider: async () => {
      if (fail) throw new Error('down');
      return makeJwt({ iat: 5, exp: 905 });
    },
  });
  const first = (await manager.get()) as HeldToken;
  fail = true;
  advance(850_000);
  expect(manager.get()).toBe(first);
  await settle();
  expect(manager.get()).toBe(first);
  expect(manager.get()).toBe(first);
  expect(calls).toHaveLength(2);
  expect(events).toContain('error:proactive');
  advance(30_000);
  manager.get();
  expect(calls).toHaveLength(3);
});

test('past expiry the request waits for a forced refresh', async () => {
  const { manager, calls, advance } = setup();
  await manager.get();
  advance(900_001);
  const next = manager.get();
  expect(next).toBeInstanceOf(Promise);
  expect((await next).version).toBe(2);
  expect(calls).toEqual([false, true]);
});

test('a token without iat/exp is refreshed on 401 only', async () => {
  const { manager, advance } = setup({ provider: async () => makeJwt({ sub: 'u' }) });
  const held = (await manager.get()) as HeldToken;
  expect(held.expiresAt).toBe(Infinity);
  advance(10 ** 9);
  expect(manager.get()).toBe(held);
});

test('clear() discards what a provider call in flight brings back: its waiters get AbortError, never the token', async () => {
  let release: (v: string) => void = () => {};
  const { manager, calls, events } = setup({ provider: () => new Promise((resolve) => (release = resolve)) });
  const pending = manager.get() as Promise<HeldToken>;
  manager.clear();
  release(makeJwt({ iat: 1, exp: 901 }));
  await expect(pending).rejects.toMatchObject({ name: 'AbortError', code: 'ABORTED', message: expect.stringMatching(/clearToken\(\) ran/) });
  expect(events).toEqual([]);
  const next = manager.get();
  expect(next).toBeInstanceOf(Promise);
  expect(calls).toHaveLength(2);
});

test('a slower plain call that started earlier does not replace a newer forced token', async () => {
  const releases: Array<(v: string) => void> = [];
  const { manager } = setup({ provider: () => new Promise((resolve) => releases.push(resolve)) });
  const plain = manager.get() as Promise<HeldToken>;
  const forced = manager.refresh('manual');
  releases[1](makeJwt({ iat: 1, exp: 901, which: 'forced' }));
  const newer = await forced;
  releases[0](makeJwt({ iat: 1, exp: 901, which: 'plain' }));
  expect(await plain).toBe(newer);
  expect(manager.get()).toBe(newer);
});

test('afterUnauthorized with an old version returns the newer token without a provider call', async () => {
  const { manager, calls } = setup();
  const first = (await manager.get()) as HeldToken;
  const second = await manager.refresh('manual');
  expect(manager.afterUnauthorized(first.version)).toBe(second);
  expect(calls).toHaveLength(2);
});

test('a provider that throws synchronously is a TokenProviderError too', async () => {
  const { manager } = setup({
    provider: () => {
      throw new Error('sync');
    },
  });
  await expect(manager.get()).rejects.toBeInstanceOf(TokenProviderError);
});
