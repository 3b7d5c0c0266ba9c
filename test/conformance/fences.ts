/**
 * The logout fence at every point of a call (issue #29 items 2 and 3), run over every transport
 * against the fake service over real HTTP: clearToken() inside each event listener a call emits,
 * inside a schema, and while an async schema validates; the caller's signal there too. Rule 11
 * of API.md: nothing obtained for a call started before the clear (a token, the service's data,
 * a progress report) is used after it.
 */
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { createCancelToken } from '../../src/core/cancel.js';
import type { ClientEvents } from '../../src/core/events.js';
import type { Progress, StoredToken, TokenProviderContext } from '../../src/core/types.js';
import { AbortError } from '../../src/errors/index.js';
import type { FakeService } from '../helpers/fake-service.js';
import type { FileClientFactory, FileHarness } from './files.js';
import { fakeServices } from './suite.js';

/** Whose token it is (the fake service puts the user in `sub`). */
const userOf = (token: string | undefined) =>
  token === undefined ? undefined : (JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as { sub: string }).sub;

/** A provider for "the signed-in user" (a session the test switches as a logout and a sign-in would), recording each call. */
function session(service: FakeService) {
  const state = { user: 'alice', cleared: false };
  const calls: Array<{ user: string; forced: boolean; afterClear: boolean }> = [];
  const tokenProvider = async ({ forceRefresh }: TokenProviderContext) => {
    calls.push({ user: state.user, forced: forceRefresh, afterClear: state.cleared });
    return service.issue(state.user);
  };
  return { state, calls, tokenProvider };
}

/** A gate a schema waits at: `entered` resolves when validation has started, `open()` lets it finish. */
function gate() {
  let enter = () => {};
  let open = () => {};
  const entered = new Promise<void>((resolve) => (enter = resolve));
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { entered, open, wait: () => (enter(), opened) };
}

const upload = (h: FileHarness, path: string, options: Record<string, unknown>) =>
  (h.client.upload as (p: string, o: object) => Promise<unknown>)(path, options);

/** The events of a GET that gets a 401, a forced refresh and a replay, in order; `#n` counts them per type. */
const points: Array<[keyof ClientEvents, number]> = [
  ['request', 1],
  ['response', 1],
  ['unauthorized', 1],
  ['token', 1],
  ['retry', 1],
  ['request', 2],
  ['response', 2],
];

export function fencesSuite(name: string, make: FileClientFactory): void {
  describe(`fences (#29): ${name}`, () => {
    const start = fakeServices();

    describe('item 2: clearToken() in an event listener, then Bob signs in', () => {
      for (const [type, nth] of points) {
        test(`clearToken() in the ${nth === 1 ? 'first' : 'second'} '${type}' listener: the call fails, no provider call for Alice after the clear, Bob's first request carries Bob's token`, async () => {
          const service = await start();
          const { state, calls, tokenProvider } = session(service);
          const { client } = make({ baseUrl: service.url, tokenProvider });
          await client.get('/warm');
          // The service rejects Alice's token; her session (the provider) would still give her one.
          service.expireAll();
          let seen = 0;
          client.on(type, () => {
            if (++seen !== nth || state.cleared) return;
            client.clearToken();
            state.cleared = true;
          });
          const fenced = await client.get('/a').catch((e: unknown) => e);
          expect(state.cleared).toBe(true);
          expect(fenced).toBeInstanceOf(AbortError);
          // Bob signs in (after the logout's rejection has been seen, as an app's flow does).
          state.user = 'bob';
          await client.get('/b');
          expect(calls.filter((c) => c.afterClear && c.user === 'alice')).toEqual([]);
          expect(service.hits.filter((h) => h.path === '/b').map((h) => userOf(h.token))).toEqual(['bob']);
        });
      }

      test("clearToken() in a 'token' listener: getToken() hands out nothing obtained before the clear", async () => {
        const service = await start();
        const { state, tokenProvider } = session(service);
        const { client } = make({ baseUrl: service.url, tokenProvider });
        client.on('token', () => {
          if (state.cleared) return;
          state.cleared = true;
          client.clearToken();
        });
        expect(await client.getToken().catch((e: unknown) => e)).toBeInstanceOf(AbortError);
        state.user = 'bob';
        expect(userOf(await client.getToken())).toBe('bob');
      });

      test("clearToken() in a 'token' listener with a tokenStore that has key(): the logged-out token is not saved after the clear", async () => {
        const service = await start();
        const { state, tokenProvider } = session(service);
        const writes: string[] = [];
        let saved: StoredToken | null = null;
        const tokenStore = {
          get: () => saved,
          set: (value: StoredToken) => void ((saved = value), writes.push('set ' + userOf(value.token))),
          remove: () => void ((saved = null), writes.push('remove')),
          key: () => state.user,
        };
        const { client } = make({ baseUrl: service.url, tokenProvider, tokenStore });
        client.on('token', () => {
          if (state.cleared) return;
          state.cleared = true;
          client.clearToken();
        });
        expect(await client.getToken().catch((e: unknown) => e)).toBeInstanceOf(AbortError);
        expect(writes).toEqual(['remove']);
        expect(saved).toBe(null);
      });
    });

    describe('item 3: a call whose response has arrived is still fenced', () => {
      /** zod 4 with an async refine that waits at the gate (Standard Schema's validate then returns a Promise). */
      const slowSchema = (g: ReturnType<typeof gate>) =>
        z.object({ path: z.string() }).refine(async () => {
          await g.wait();
          return true;
        });

      for (const stopBy of ['clearToken()', 'the caller signal'] as const) {
        test(`request: ${stopBy} while an async schema validates -> AbortError, never Alice's data`, async () => {
          const service = await start();
          const { tokenProvider } = session(service);
          const { client } = make({ baseUrl: service.url, tokenProvider });
          const g = gate();
          const cancel = createCancelToken();
          const call = client.get('/orders', { schema: slowSchema(g), signal: cancel.signal }).catch((e: unknown) => e);
          await g.entered;
          if (stopBy === 'clearToken()') client.clearToken();
          else cancel.cancel('page closed');
          g.open();
          expect(await call).toBeInstanceOf(AbortError);
        });

        test(`upload: ${stopBy} while an async schema validates -> AbortError, and onProgress is silent after it`, async () => {
          const service = await start();
          const { tokenProvider } = session(service);
          const h = make({ baseUrl: service.url, tokenProvider });
          const g = gate();
          const cancel = createCancelToken();
          const progress: Array<{ percent: number; afterStop: boolean }> = [];
          let stopped = false;
          const call = upload(h, '/upload/photo', {
            ...h.source(Buffer.alloc(4096, 7), 'photo.jpg'),
            name: 'file',
            schema: slowSchema(g),
            signal: cancel.signal,
            onProgress: (p: Progress) => progress.push({ percent: p.percent, afterStop: stopped }),
          }).catch((e: unknown) => e);
          // The call fails here if the upload itself failed: the gate is never reached then.
          await Promise.race([g.entered, call.then((e) => Promise.reject(e as Error))]);
          stopped = true;
          if (stopBy === 'clearToken()') h.client.clearToken();
          else cancel.cancel('page closed');
          g.open();
          expect(await call).toBeInstanceOf(AbortError);
          expect(progress.filter((p) => p.afterStop)).toEqual([]);
        });
      }

      test('a schema that logs the user out as it validates (synchronously): the call fails with AbortError', async () => {
        const service = await start();
        const { tokenProvider } = session(service);
        const { client } = make({ baseUrl: service.url, tokenProvider });
        const schema = {
          '~standard': {
            version: 1 as const,
            vendor: 'test',
            validate: (value: unknown) => {
              client.clearToken();
              return { value };
            },
          },
        };
        expect(await client.get('/orders', { schema }).catch((e: unknown) => e)).toBeInstanceOf(AbortError);
      });
    });
  });
}
