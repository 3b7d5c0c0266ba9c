/**
 * The app's life and the network (issue #45), one suite over every world that has them: each
 * mini-program host emulation (its onAppShow/onAppHide, onNetworkStatusChange, getNetworkType and
 * `request:fail interrupted`, test/helpers/hosts.ts) and the browser entry's page signals. Each
 * item of the issue, and the interleavings the team's rule asks for: hidden or offline at every
 * await of a call, a logout or user switch while a call waits, the caller's signal, flapping, two
 * clients on one host, a provider that fails offline.
 */
import { describe, expect, test } from 'vitest';
import type { Client } from '../../src/core/client.js';
import type { ClientEvents } from '../../src/core/events.js';
import type { CoreClientOptions, TokenProviderContext } from '../../src/core/types.js';
import { createClock, type FakeService } from '../helpers/fake-service.js';
import { fakeServices } from './suite.js';

/** A client (or more) on one emulated host or page, and what a test does to the host. */
export interface LifeWorld {
  client: Client;
  /** Another client on the same host or page. */
  add(options: CoreClientOptions): Client;
  hide(): void;
  show(): void;
  setNetwork(isConnected: boolean): void;
  /** Requests handed to the host (or to fetch) so far. */
  sent(): number;
  /** Listeners the clients added to the host's (or page's) signals. */
  listeners(): number;
  /** The host cuts the calls in flight as it does a hidden app's (mini-programs only); `onShow`: delivered on resume. */
  interrupt?(options?: { onShow?: boolean }): void;
}

export type LifeFactory = (options: CoreClientOptions) => LifeWorld;

/** Polls `check` until it holds (a few seconds at most): what happens on another turn, never a timing assertion. */
export async function eventually(check: () => boolean, what = 'the condition'): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error('never reached: ' + what);
}

/** A tokenProvider over the fake service whose answers the test may hold back (`hold`), recording its calls. */
export function heldProvider(service: FakeService) {
  const calls: TokenProviderContext[] = [];
  const waiting: Array<() => void> = [];
  const state = { hold: false, fail: false };
  const provider = (context: TokenProviderContext): string | Promise<string> => {
    calls.push(context);
    if (state.fail) return Promise.reject(new Error('the token route is unreachable (offline)'));
    if (!state.hold) return service.issue();
    return new Promise<string>((resolve, reject) =>
      waiting.push(() => (state.fail ? reject(new Error('the token route is unreachable (offline)')) : resolve(service.issue()))),
    );
  };
  return Object.assign(provider, {
    calls,
    state,
    /** Lets every held provider call answer. */
    release: () => waiting.splice(0).forEach((answer) => answer()),
    waiting: () => waiting.length,
  });
}

/** The events of one type a client emitted. */
function recorder<K extends keyof ClientEvents>(client: Client, type: K): Array<ClientEvents[K]> {
  const seen: Array<ClientEvents[K]> = [];
  client.on(type, (payload) => void seen.push(payload));
  return seen;
}

const quick = { retry: { delay: () => 1 } };

/** Worlds of `factory` for the tests of the enclosing describe: `used()` is one whose client made its first call. */
function worlds(factory: LifeFactory) {
  const start = fakeServices();
  /** A world with a 600-s token on a shared clock, its first call made (the client in use). */
  async function used(extra: Partial<CoreClientOptions> = {}) {
    const clock = createClock(Date.now());
    const service = await start({ ttl: 600, clock });
    const provider = heldProvider(service);
    const world = factory({ baseUrl: service.url, tokenProvider: provider, now: clock.now, ...quick, ...extra });
    await world.client.get('/first');
    return { clock, service, provider, world, client: world.client };
  }
  return { start, used };
}

/** Item 1 of issue #45 and its interleavings, on every world. */
export function appLifeSuite(name: string, factory: LifeFactory): void {
  describe(`the app's life and the network: ${name}`, () => {
    const { start, used } = worlds(factory);

    describe('1. pre-warm on show', () => {
      test('a token that ended while the app was hidden is refreshed on show, before any call; the first call after it shares it', async () => {
        const { clock, service, provider, world, client } = await used();
        provider.state.hold = true;
        world.hide();
        clock.advance(601_000);
        expect(provider.calls).toHaveLength(1);
        world.show();
        // On show, not at the next call: the refresh is under way before anything asks for it.
        await eventually(() => provider.calls.length === 2, 'a provider call on show');
        expect(provider.calls[1].forceRefresh).toBe(true);
        // A call meanwhile joins that refresh (one provider call), then goes with its token: no 401.
        const call = client.get('/after-show');
        provider.release();
        await call;
        expect(provider.calls).toHaveLength(2);
        expect(service.hits.at(-1)).toMatchObject({ path: '/after-show', status: 200, token: service.issued[1] });
      });

      test('the first call after show does not wait for the provider: the refreshed token is there when it starts', async () => {
        const { clock, provider, world, client } = await used();
        const tokens = recorder(client, 'token');
        world.hide();
        clock.advance(601_000);
        world.show();
        // The provider answers while the app shows its page, before the user's first tap.
        await eventually(() => tokens.length === 1, 'the token refreshed on show');
        expect(tokens[0].reason).toBe('expired');
        await client.get('/after-show');
        // That call asked nobody: the token was already there.
        expect(provider.calls).toHaveLength(2);
        expect(tokens).toHaveLength(1);
      });

      test('a token within refreshLeeway on show is refreshed ahead (proactive) and still used meanwhile', async () => {
        const { clock, provider, world } = await used({ refreshLeeway: 60 });
        const tokens = recorder(world.client, 'token');
        world.hide();
        clock.advance(560_000); // 40 s left: inside the 60-s leeway, not ended
        world.show();
        await eventually(() => tokens.length === 1, 'the refresh ahead on show');
        expect(tokens[0].reason).toBe('proactive');
        expect(provider.calls.map((c) => c.forceRefresh)).toEqual([false, true]);
      });

      test('a fresh token costs nothing on show; after clearToken() nothing is asked for on show', async () => {
        const { clock, provider, world, client } = await used();
        world.hide();
        clock.advance(10_000);
        world.show();
        await new Promise((resolve) => setTimeout(resolve, 20));
        expect(provider.calls).toHaveLength(1);
        client.clearToken();
        world.hide();
        clock.advance(700_000);
        world.show();
        await new Promise((resolve) => setTimeout(resolve, 20));
        expect(provider.calls).toHaveLength(1);
      });

      test('show/hide flapping fast makes one provider call', async () => {
        const { clock, provider, world, client } = await used();
        provider.state.hold = true;
        world.hide();
        clock.advance(601_000);
        for (let i = 0; i < 20; i++) {
          world.show();
          world.hide();
        }
        world.show();
        await eventually(() => provider.calls.length === 2, 'the refresh on show');
        provider.release();
        await client.get('/after');
        expect(provider.calls).toHaveLength(2);
      });

      test('two clients on one host: each refreshes its own token on show, once', async () => {
        const { clock, service, provider, world } = await used();
        const other = heldProvider(service);
        const second = world.add({ baseUrl: service.url, tokenProvider: other, now: clock.now, ...quick });
        await second.get('/second');
        world.hide();
        clock.advance(601_000);
        world.show();
        await eventually(() => provider.calls.length === 2 && other.calls.length === 2, 'both refreshes');
        await Promise.all([world.client.get('/a'), second.get('/b')]);
        expect([provider.calls.length, other.calls.length]).toEqual([2, 2]);
      });

      test('a client never used adds no listener (and asks nothing on show)', async () => {
        const service = await start();
        const provider = heldProvider(service);
        const world = factory({ baseUrl: service.url, tokenProvider: provider });
        world.hide();
        world.show();
        world.setNetwork(false);
        world.setNetwork(true);
        expect(world.listeners()).toBe(0);
        expect(provider.calls).toHaveLength(0);
        await world.client.get('/a');
        expect(world.listeners()).toBeGreaterThan(0);
      });
    });
  });
}

/** What only a mini-program host does: it calls request() in the caller's turn. */
export function hostLifeSuite(name: string, factory: LifeFactory): void {
  describe(`the app's life on a mini-program host: ${name}`, () => {
    const { used } = worlds(factory);

    test('the first call after show is handed to the host in the same turn: no provider round trip before it', async () => {
      const { clock, world, client } = await used();
      const tokens: unknown[] = [];
      client.on('token', (t) => void tokens.push(t));
      world.hide();
      clock.advance(601_000);
      world.show();
      await eventually(() => tokens.length === 1, 'the token refreshed on show');
      const before = world.sent();
      const call = client.get('/after-show');
      expect(world.sent()).toBe(before + 1);
      await call;
    });
  });
}
