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
import type { CoreClientOptions, TokenProviderContext, TokenStore } from '../../src/core/types.js';
import { isChannelError, type NetworkError } from '../../src/errors/index.js';
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

/** Items 1 and 2 of issue #45 and their interleavings, on every world. */
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

    describe('2. offline', () => {
      test('a GET waits for the network: nothing sent, the provider not asked; back online it goes once and resolves', async () => {
        const { clock, provider, world, client } = await used();
        const waits = recorder(client, 'wait');
        const network = recorder(client, 'network');
        world.setNetwork(false);
        await eventually(() => network.length === 1, 'the network event');
        clock.advance(601_000); // the token ended too: still nobody is asked offline
        const before = world.sent();
        const call = client.get('/offline');
        await eventually(() => waits.length === 1, 'the wait event');
        await new Promise((resolve) => setTimeout(resolve, 20));
        expect(world.sent()).toBe(before);
        expect(provider.calls).toHaveLength(1);
        expect(waits[0]).toMatchObject({ method: 'GET', until: 'online' });
        world.setNetwork(true);
        await expect(call).resolves.toMatchObject({ path: '/offline' });
        expect(world.sent()).toBe(before + 1);
        expect(provider.calls).toHaveLength(2);
        expect(network.map((n) => n.online)).toEqual([false, true]);
      });

      test('a POST fails at once with NetworkError (offline: true) and is not sent', async () => {
        const { world, client } = await used();
        world.setNetwork(false);
        const before = world.sent();
        const error = (await client.post('/write', { json: { a: 1 } }).catch((e: unknown) => e)) as NetworkError;
        expect(isChannelError(error) && error.code).toBe('NETWORK_ERROR');
        expect(error.offline).toBe(true);
        expect(error.message).toMatch(/offline/);
        expect(world.sent()).toBe(before);
      });

      test('the call chooses: offline: { wait: 0 } fails a GET at once; offline: { wait } has a POST wait', async () => {
        const { world, client } = await used();
        world.setNetwork(false);
        const error = (await client.get('/now', { offline: { wait: 0 } }).catch((e: unknown) => e)) as NetworkError;
        expect(error.offline).toBe(true);
        const post = client.post('/later', { json: { b: 2 }, offline: { wait: 10_000 } });
        await new Promise((resolve) => setTimeout(resolve, 20));
        world.setNetwork(true);
        await expect(post).resolves.toMatchObject({ path: '/later' });
      });

      test('past offline.wait the call fails with NetworkError (offline: true), never sent', async () => {
        const { world, service, provider } = await used();
        const client = world.add({ baseUrl: service.url, tokenProvider: provider, offline: { wait: 30 } });
        await client.get('/in-use');
        world.setNetwork(false);
        const before = world.sent();
        const error = (await client.get('/never').catch((e: unknown) => e)) as NetworkError;
        expect(error.offline).toBe(true);
        expect(error.message).toContain('offline.wait (30 ms)');
        expect(world.sent()).toBe(before);
      });

      test("the caller's signal ends a call waiting for the network: AbortError, never sent", async () => {
        const { world, client } = await used();
        world.setNetwork(false);
        const controller = new AbortController();
        const before = world.sent();
        const call = client.get('/abort', { signal: controller.signal });
        await new Promise((resolve) => setTimeout(resolve, 10));
        controller.abort('page closed');
        await expect(call).rejects.toMatchObject({ code: 'ABORTED' });
        world.setNetwork(true);
        await new Promise((resolve) => setTimeout(resolve, 20));
        expect(world.sent()).toBe(before);
      });

      test('clearToken() while a call waits for the network: AbortError, never sent, nobody asked', async () => {
        const { world, client, provider } = await used();
        world.setNetwork(false);
        const before = world.sent();
        const call = client.get('/fenced');
        await new Promise((resolve) => setTimeout(resolve, 10));
        client.clearToken();
        await expect(call).rejects.toMatchObject({ code: 'ABORTED', message: expect.stringContaining('clearToken()') });
        world.setNetwork(true);
        await new Promise((resolve) => setTimeout(resolve, 20));
        expect(world.sent()).toBe(before);
        expect(provider.calls).toHaveLength(1);
      });

      test('a user switch (tokenStore key) while a call waits: fenced, never sent with the previous token', async () => {
        const clock = createClock(Date.now());
        const service = await start({ ttl: 600, clock });
        const provider = heldProvider(service);
        let user = 'alice';
        let saved: unknown = null;
        const store: TokenStore = { key: () => user, get: () => saved as never, set: (v) => void (saved = v), remove: () => void (saved = null) };
        const world = factory({ baseUrl: service.url, tokenProvider: provider, now: clock.now, tokenStore: store, ...quick });
        await world.client.get('/first');
        world.setNetwork(false);
        const before = world.sent();
        const call = world.client.get('/switched');
        await new Promise((resolve) => setTimeout(resolve, 10));
        user = 'bob';
        // Another call notices the switch (as any call would): the waiting one is fenced.
        const next = world.client.get('/bob');
        await expect(call).rejects.toMatchObject({ code: 'ABORTED' });
        expect(world.sent()).toBe(before);
        world.setNetwork(true);
        await next;
        expect(service.hits.filter((h) => h.path === '/switched')).toHaveLength(0);
        expect(service.hits.at(-1)).toMatchObject({ path: '/bob', token: service.issued[1] });
      });

      test('online/offline flapping fast: every waiting GET is sent exactly once and resolves', async () => {
        const { world, client, service } = await used();
        world.setNetwork(false);
        const before = world.sent();
        const calls = Array.from({ length: 5 }, (_, i) => client.get('/flap/' + i));
        for (let i = 0; i < 10; i++) {
          world.setNetwork(true);
          world.setNetwork(false);
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
        // It ended offline: nothing went in the moments it was up.
        expect(world.sent()).toBe(before);
        world.setNetwork(true);
        await Promise.all(calls);
        for (let i = 0; i < 5; i++) expect(service.hits.filter((h) => h.path === '/flap/' + i)).toHaveLength(1);
      });

      test('offline during the provider call: the token comes, the call waits before its send', async () => {
        const { clock, world, client, provider, service } = await used();
        provider.state.hold = true;
        clock.advance(601_000);
        const call = client.get('/during-provider');
        await eventually(() => provider.calls.length === 2, 'the provider call');
        world.setNetwork(false);
        const before = world.sent();
        provider.release();
        await new Promise((resolve) => setTimeout(resolve, 20));
        expect(world.sent()).toBe(before);
        expect(service.hits.filter((h) => h.path === '/during-provider')).toHaveLength(0);
        world.setNetwork(true);
        await expect(call).resolves.toMatchObject({ path: '/during-provider' });
      });

      test('a provider that fails offline: the GET waits and asks again once online; a POST fails with NetworkError (offline)', async () => {
        const { clock, world, client, provider } = await used();
        provider.state.hold = true;
        clock.advance(601_000);
        const get = client.get('/provider-offline');
        await eventually(() => provider.calls.length === 2, 'the provider call');
        world.setNetwork(false);
        provider.state.fail = true;
        provider.release();
        const post = client.post('/provider-offline-write', { json: {} }).catch((e: unknown) => e);
        expect(((await post) as NetworkError).offline).toBe(true);
        await new Promise((resolve) => setTimeout(resolve, 20));
        provider.state.fail = false;
        provider.state.hold = false;
        world.setNetwork(true);
        await expect(get).resolves.toMatchObject({ path: '/provider-offline' });
        expect(provider.calls).toHaveLength(3);
      });

      test('offline during the backoff sleep: the retry waits for the network', async () => {
        const { world, client, service } = await used({ retry: { delay: () => 50 } });
        const retries = recorder(client, 'retry');
        const call = client.get('/flaky/1');
        await eventually(() => retries.length === 1, 'the retry announced');
        world.setNetwork(false);
        const before = world.sent();
        await new Promise((resolve) => setTimeout(resolve, 80));
        expect(world.sent()).toBe(before);
        expect(service.hits.filter((h) => h.path === '/flaky/1')).toHaveLength(1);
        world.setNetwork(true);
        await expect(call).resolves.toMatchObject({ path: '/flaky/1' });
      });

      test('offline after a 401: the forced refresh waits for the network, then the replay goes', async () => {
        const { world, client, service, provider } = await used();
        const unauthorized = recorder(client, 'unauthorized');
        client.on('unauthorized', () => world.setNetwork(false));
        service.expireAll();
        const call = client.get('/replayed');
        await eventually(() => unauthorized.length === 1, 'the 401');
        await new Promise((resolve) => setTimeout(resolve, 20));
        expect(provider.calls).toHaveLength(1);
        world.setNetwork(true);
        await expect(call).resolves.toMatchObject({ path: '/replayed' });
        expect(provider.calls.map((c) => c.forceRefresh)).toEqual([false, true]);
      });
    });
  });
}

/**
 * What only a mini-program host does: it calls request() in the caller's turn, fails what is in
 * flight when the network goes, and cuts a hidden app's requests (`request:fail interrupted`,
 * item 3 of issue #45).
 */
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

    test('a network failure while the host reports offline is offline, not a retry: with retry: 0 the GET goes again once online', async () => {
      const { world, client, service } = await used();
      const retries = recorder(client, 'retry');
      const call = client.get('/slow/200', { retry: 0 });
      await eventually(() => world.sent() === 2, 'the GET in flight');
      // The network goes: the host cuts what is in flight ("network change, cancel all task").
      world.setNetwork(false);
      await eventually(() => retries.length === 1, 'the resend announced');
      expect(retries[0].reason).toBe('offline');
      world.setNetwork(true);
      await expect(call).resolves.toMatchObject({ path: '/slow/200' });
      expect(service.hits.filter((h) => h.path === '/slow/200')).toHaveLength(1);
    });

    test("a GET queued behind the host's limit when the network goes waits: nothing sent, the provider not asked offline; it resolves once online", async () => {
      // One request slot (concurrency 2 keeps one for the provider): the second GET waits in the queue.
      const { clock, world, client, provider, service } = await used({ concurrency: 2 } as Partial<CoreClientOptions>);
      const first = client.get('/slow/200');
      const queued = client.get('/queued');
      await eventually(() => world.sent() === 2, 'the first GET in flight');
      // The token ends while the GET is queued, and the provider cannot be reached offline.
      clock.advance(601_000);
      provider.state.fail = true;
      world.setNetwork(false);
      const outcome = queued.then(
        () => 'resolved',
        (e: unknown) => 'rejected: ' + String(e),
      );
      await new Promise((resolve) => setTimeout(resolve, 30));
      expect(world.sent()).toBe(2);
      expect(provider.calls).toHaveLength(1);
      expect(await Promise.race([outcome, 'waiting'])).toBe('waiting');
      provider.state.fail = false;
      world.setNetwork(true);
      await expect(first).resolves.toMatchObject({ path: '/slow/200' });
      await expect(queued).resolves.toMatchObject({ path: '/queued' });
      expect(service.hits.filter((h) => h.path === '/queued')).toHaveLength(1);
    });

    test("GETs queued behind the host's limit when the network goes all wait at once (each its own offline.wait), none holding a slot", async () => {
      const { world, client } = await used({ concurrency: 2, offline: { wait: 100 } } as Partial<CoreClientOptions>);
      const log: string[] = [];
      client.on('wait', () => void log.push('wait'));
      const calls = [client.get('/slow/200'), client.get('/queued/1'), client.get('/queued/2'), client.get('/queued/3')].map((call) =>
        call.then(
          () => log.push('resolved'),
          (e: NetworkError) => log.push(e.offline ? 'offline' : String(e)),
        ),
      );
      await eventually(() => world.sent() === 2, 'the first GET in flight');
      world.setNetwork(false);
      await Promise.all(calls);
      // Every call waited before any wait ended: not one batch of slots after another.
      expect(log).toEqual(['wait', 'wait', 'wait', 'wait', 'offline', 'offline', 'offline', 'offline']);
      expect(world.sent()).toBe(2);
      world.setNetwork(true);
    });

    test("a POST queued behind the host's limit when the network goes fails with NetworkError (offline: true), never sent", async () => {
      const { world, client, service } = await used({ concurrency: 2 } as Partial<CoreClientOptions>);
      const first = client.get('/slow/200');
      const queued = client.post('/queued-write', { json: { once: true } }).catch((e: unknown) => e);
      await eventually(() => world.sent() === 2, 'the first GET in flight');
      world.setNetwork(false);
      const error = (await queued) as NetworkError;
      expect(error).toMatchObject({ code: 'NETWORK_ERROR', offline: true });
      expect(world.sent()).toBe(2);
      world.setNetwork(true);
      await first;
      expect(service.hits.filter((h) => h.path === '/queued-write')).toHaveLength(0);
    });

    test("calls that may wait queued behind the host's limit when the network goes (a POST with offline: { wait }, client.hostRequest's GET) wait as unqueued ones do, and go once online", async () => {
      const { world, client, service } = await used({ concurrency: 2 } as Partial<CoreClientOptions>);
      const hostRequest = (client as unknown as { hostRequest(o: { url: string }): Promise<{ statusCode: number }> }).hostRequest;
      const first = client.get('/slow/200');
      const queued = [client.post('/queued-write', { json: { once: true }, offline: { wait: 5000 } }), hostRequest({ url: '/queued-native' })];
      const outcomes = queued.map((call) =>
        call.then(
          () => 'resolved',
          (e: unknown) => 'rejected: ' + String(e),
        ),
      );
      await eventually(() => world.sent() === 2, 'the first GET in flight');
      world.setNetwork(false);
      await new Promise((resolve) => setTimeout(resolve, 30));
      for (const outcome of outcomes) expect(await Promise.race([outcome, 'waiting'])).toBe('waiting');
      world.setNetwork(true);
      await first;
      expect(await Promise.all(outcomes)).toEqual(['resolved', 'resolved']);
      expect(service.hits.filter((h) => h.path === '/queued-write' || h.path === '/queued-native')).toHaveLength(2);
    });

    test("a 401's replay queued behind the host's limit when the network goes waits, then goes once with the refreshed token (no second refresh)", async () => {
      const { world, client, service, provider } = await used({ concurrency: 2 } as Partial<CoreClientOptions>);
      await client.get('/warm');
      const waits = recorder(client, 'wait');
      let slow: Promise<unknown> | undefined;
      // The 401's slot is free when its listeners run: /slow/300 takes it, and the replay queues behind it.
      client.on('unauthorized', () => void (slow = slow || client.get('/slow/300')));
      service.rejectNext(1);
      const call = client.get('/replayed');
      await eventually(() => provider.calls.length === 2 && world.sent() >= 4, 'the forced refresh and /slow/300');
      await new Promise((resolve) => setTimeout(resolve, 20));
      world.setNetwork(false);
      await new Promise((resolve) => setTimeout(resolve, 30));
      expect(service.hits.filter((h) => h.path === '/replayed')).toHaveLength(1);
      world.setNetwork(true);
      await expect(call).resolves.toMatchObject({ path: '/replayed' });
      await slow;
      // It left the queue unsent and waited for the network, as the cut /slow/300 did.
      expect(waits.map((w) => w.url.replace(/^.*\//, '/'))).toContain('/replayed');
      expect(provider.calls.map((c) => c.forceRefresh)).toEqual([false, true]);
      expect(service.hits.filter((h) => h.path === '/replayed').map((h) => h.status)).toEqual([401, 200]);
    });

    test("a user switch (tokenStore key) while a GET is queued behind the host's limit: fenced as it leaves, never sent with the previous user's token", async () => {
      let user = 'alice';
      let saved: unknown = null;
      const store: TokenStore = { key: () => user, get: () => saved as never, set: (v) => void (saved = v), remove: () => void (saved = null) };
      const { world, service } = await used({ concurrency: 2, tokenStore: store } as Partial<CoreClientOptions>);
      const first = world.client.get('/slow/200').catch((e: unknown) => e);
      const queued = world.client.get('/queued-switched').catch((e: unknown) => e);
      await eventually(() => world.sent() === 2, 'the first GET in flight');
      user = 'bob';
      await first;
      expect(await queued).toMatchObject({ code: 'ABORTED' });
      expect(service.hits.filter((h) => h.path === '/queued-switched')).toHaveLength(0);
      await world.client.get('/bob');
      expect(service.hits.at(-1)).toMatchObject({ path: '/bob', token: service.issued.at(-1) });
      expect(service.hits.at(-1)!.token).not.toBe(service.issued[0]);
    });

    test("a GET queued behind the host's limit when clearToken() comes: AbortError at once, never sent, its place not kept", async () => {
      const { world, client, service } = await used({ concurrency: 2 } as Partial<CoreClientOptions>);
      const first = client.get('/slow/200').catch((e: unknown) => e);
      const queued = client.get('/queued-cleared').catch((e: unknown) => e);
      await eventually(() => world.sent() === 2, 'the first GET in flight');
      client.clearToken();
      expect(await queued).toMatchObject({ code: 'ABORTED' });
      await first;
      await client.get('/after-clear');
      expect(service.hits.filter((h) => h.path === '/queued-cleared')).toHaveLength(0);
    });

    test("a GET queued behind the host's limit whose signal aborts while queued ends at once; the network going and coming back meanwhile changes nothing for the next", async () => {
      const { world, client, service } = await used({ concurrency: 2 } as Partial<CoreClientOptions>);
      const first = client.get('/slow/200');
      const controller = new AbortController();
      const aborted = client.get('/queued-aborted', { signal: controller.signal }).catch((e: unknown) => e);
      const flapped = client.get('/queued-flapped');
      await eventually(() => world.sent() === 2, 'the first GET in flight');
      controller.abort();
      expect(await aborted).toMatchObject({ code: 'ABORTED' });
      world.setNetwork(false);
      world.setNetwork(true);
      await first;
      await expect(flapped).resolves.toMatchObject({ path: '/queued-flapped' });
      expect(service.hits.filter((h) => h.path === '/queued-aborted')).toHaveLength(0);
      expect(service.hits.filter((h) => h.path === '/queued-flapped')).toHaveLength(1);
    });

    describe('3. interrupted in the background', () => {
      test('a GET the host cut while hidden is not retried while hidden; sent once more on show, it resolves', async () => {
        const { world, client, service } = await used();
        const retries = recorder(client, 'retry');
        const call = client.get('/slow/100');
        await eventually(() => world.sent() === 2, 'the GET in flight');
        world.hide();
        world.interrupt!();
        await eventually(() => retries.length === 1, 'the resend announced');
        await new Promise((resolve) => setTimeout(resolve, 30));
        expect(world.sent()).toBe(2);
        expect(retries[0].reason).toBe('interrupted');
        world.show();
        await expect(call).resolves.toMatchObject({ path: '/slow/100' });
        expect(world.sent()).toBe(3);
        expect(service.hits.filter((h) => h.path === '/slow/100' && h.status === 200)).toHaveLength(1);
      });

      test('the failure delivered on show (the JS thread was suspended): sent once more, resolves', async () => {
        const { world, client } = await used({ retry: 0 });
        const call = client.get('/slow/100');
        await eventually(() => world.sent() === 2, 'the GET in flight');
        world.hide();
        world.interrupt!({ onShow: true });
        world.show();
        await expect(call).resolves.toMatchObject({ path: '/slow/100' });
        expect(world.sent()).toBe(3);
      });

      test('a GET that may not wait (offline: { wait: 0 }) cut while hidden keeps its ordinary retries, as before: it resolves', async () => {
        const { world, client } = await used();
        const retries = recorder(client, 'retry');
        const call = client.get('/slow/100', { offline: { wait: 0 } });
        await eventually(() => world.sent() === 2, 'the GET in flight');
        world.hide();
        world.interrupt!();
        await expect(call).resolves.toMatchObject({ path: '/slow/100' });
        expect(retries.map((r) => r.reason)).toEqual(['network']);
        expect(world.sent()).toBe(3);
      });

      test('a GET sent while hidden and cut, its failure arriving after show: sent once more, not a retry (retry: 0)', async () => {
        const { world, client } = await used({ retry: 0 });
        const retries = recorder(client, 'retry');
        world.hide();
        const call = client.get('/slow/100');
        await eventually(() => world.sent() === 2, 'the GET in flight');
        // Whichever the host delivers first on resume: here onAppShow's listeners, then the failure.
        world.show();
        world.interrupt!();
        await expect(call).resolves.toMatchObject({ path: '/slow/100' });
        expect(retries.map((r) => r.reason)).toEqual(['interrupted']);
        expect(world.sent()).toBe(3);
      });

      test('an interrupted write is never sent again: NetworkError', async () => {
        const { world, client } = await used();
        const call = client.post('/slow/100', { json: { once: true } }).catch((e: unknown) => e);
        await eventually(() => world.sent() === 2, 'the POST in flight');
        world.hide();
        world.interrupt!();
        world.show();
        const error = (await call) as NetworkError;
        expect(error.code).toBe('NETWORK_ERROR');
        expect(error.errMsg).toMatch(/interrupted/);
        await new Promise((resolve) => setTimeout(resolve, 20));
        expect(world.sent()).toBe(2);
      });

      test('hidden after a 401: the forced refresh waits for show, then the replay goes', async () => {
        const { world, client, service, provider } = await used();
        const unauthorized = recorder(client, 'unauthorized');
        client.on('unauthorized', () => world.hide());
        service.expireAll();
        const call = client.get('/replayed-hidden');
        await eventually(() => unauthorized.length === 1, 'the 401');
        await new Promise((resolve) => setTimeout(resolve, 20));
        expect(provider.calls).toHaveLength(1);
        world.show();
        await expect(call).resolves.toMatchObject({ path: '/replayed-hidden' });
        expect(provider.calls.map((c) => c.forceRefresh)).toEqual([false, true]);
      });

      test('clearToken() while a cut GET waits for show: AbortError, never sent again', async () => {
        const { world, client } = await used();
        const waits = recorder(client, 'wait');
        const call = client.get('/slow/100');
        await eventually(() => world.sent() === 2, 'the GET in flight');
        world.hide();
        world.interrupt!();
        await eventually(() => waits.length === 1, 'the wait for show');
        expect(waits[0].until).toBe('shown');
        client.clearToken();
        await expect(call).rejects.toMatchObject({ code: 'ABORTED', message: expect.stringContaining('clearToken()') });
        world.show();
        await new Promise((resolve) => setTimeout(resolve, 20));
        expect(world.sent()).toBe(2);
      });

      test('hidden during the backoff sleep: the retry waits for show', async () => {
        const { world, client, service } = await used({ retry: { delay: () => 30 } });
        const retries = recorder(client, 'retry');
        const call = client.get('/flaky/1');
        await eventually(() => retries.length === 1, 'the retry announced');
        world.hide();
        await new Promise((resolve) => setTimeout(resolve, 80));
        expect(service.hits.filter((h) => h.path === '/flaky/1')).toHaveLength(1);
        world.show();
        await expect(call).resolves.toMatchObject({ path: '/flaky/1' });
      });

      test("a retry queued behind the host's limit when the app is hidden waits for show, not sent hidden", async () => {
        // One request slot: the retry of /flaky/1 waits in the queue behind /slow/200.
        const { world, client, service } = await used({ concurrency: 2, retry: { delay: () => 50 } } as Partial<CoreClientOptions>);
        const retries = recorder(client, 'retry');
        const flaky = client.get('/flaky/1');
        await eventually(() => retries.length === 1, 'the retry announced');
        // Takes the slot during the retry's 50-ms backoff.
        const slow = client.get('/slow/200');
        await new Promise((resolve) => setTimeout(resolve, 100));
        world.hide();
        // /slow/200 ends while the app is hidden: its slot frees, and the queued retry leaves.
        await slow;
        await new Promise((resolve) => setTimeout(resolve, 30));
        expect(service.hits.filter((h) => h.path === '/flaky/1')).toHaveLength(1);
        world.show();
        await expect(flaky).resolves.toMatchObject({ path: '/flaky/1' });
        expect(service.hits.filter((h) => h.path === '/flaky/1')).toHaveLength(2);
      });

      test('two clients on one host: both GETs cut while hidden go again on show', async () => {
        const { world, client, service, clock } = await used();
        const second = world.add({ baseUrl: service.url, tokenProvider: heldProvider(service), now: clock.now, ...quick });
        await second.get('/second');
        const sentBefore = world.sent();
        const calls = [client.get('/slow/200'), second.get('/slow/250')];
        await eventually(() => world.sent() === sentBefore + 2, 'both in flight');
        world.hide();
        world.interrupt!();
        await new Promise((resolve) => setTimeout(resolve, 20));
        expect(world.sent()).toBe(sentBefore + 2);
        world.show();
        await Promise.all(calls);
        expect(world.sent()).toBe(sentBefore + 4);
      });
    });
  });
}
