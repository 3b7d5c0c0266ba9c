// @vitest-environment node
// The app's life and the network (issue #45) over every mini-program host emulation, each with
// its own onAppShow/onAppHide, onNetworkStatusChange and getNetworkType payloads, installed as its
// global (the client finds them on the host whose request() it was given).
import { describe, expect, test } from 'vitest';
import { createClient } from '../../src/miniprogram.js';
import { HOST_NAMES } from '../../src/transports/miniprogram/host-globals.js';
import { createHost, type HostKind } from '../helpers/hosts.js';
import { appLifeSuite, eventually, heldProvider, hostLifeSuite, type LifeFactory } from './app-life.js';
import { fakeServices } from './suite.js';

const kinds: HostKind[] = [...HOST_NAMES];

/** A client on an emulated `kind` host, installed as its global as the runtime has it. */
const onHost =
  (kind: HostKind): LifeFactory =>
  (options) => {
    const host = createHost(kind);
    (globalThis as Record<string, unknown>)[kind] = host;
    const make = (o: typeof options) => createClient({ ...o, request: host.request });
    return {
      client: make(options),
      add: make,
      hide: host.hide,
      show: host.show,
      setNetwork: (isConnected) => host.setNetwork({ isConnected }),
      sent: () => host.calls.length,
      listeners: () => {
        const { show, hide, network } = host.life.listeners();
        return show + hide + network;
      },
      interrupt: host.interruptInFlight,
    };
  };

for (const kind of kinds) {
  appLifeSuite(`mini-program over ${kind}`, onHost(kind));
  hostLifeSuite(`mini-program over ${kind}`, onHost(kind));
}

describe('hosts without the app-life functions behave as today', () => {
  const start = fakeServices();

  test('WeChat before 2.1.2 (no onAppShow, no onNetworkStatusChange): a GET failing offline is retried as before, then NetworkError', async () => {
    const service = await start();
    const host = createHost('wx', { noLifecycle: true });
    (globalThis as Record<string, unknown>).wx = host;
    const provider = heldProvider(service);
    const client = createClient({ baseUrl: service.url, tokenProvider: provider, request: host.request, retry: { delay: () => 1 } });
    await client.get('/first');
    host.setNetwork({ isConnected: false });
    await expect(client.get('/offline')).rejects.toMatchObject({ code: 'NETWORK_ERROR', offline: false });
    // One attempt and the two retries of the default policy, each failing on the dead network.
    expect(host.calls).toHaveLength(4);
    expect(host.life.listeners()).toEqual({ show: 0, hide: 0, network: 0 });
  });

  test('offline: false: the network is not followed (no network listener, getNetworkType not asked); a GET the host fails offline is retried as before, then NetworkError', async () => {
    const service = await start();
    const host = createHost('wx');
    (globalThis as Record<string, unknown>).wx = host;
    let asked = 0;
    const { getNetworkType } = host.life.functions;
    Object.assign(host, { getNetworkType: (o: never) => (asked++, getNetworkType(o)) });
    const client = createClient({
      baseUrl: service.url,
      tokenProvider: heldProvider(service),
      request: host.request,
      retry: { delay: () => 1 },
      offline: false,
    });
    await client.get('/first');
    expect(host.life.listeners()).toEqual({ show: 1, hide: 1, network: 0 });
    expect(asked).toBe(0);
    host.setNetwork({ isConnected: false });
    const sent = host.calls.length;
    await expect(client.get('/offline')).rejects.toMatchObject({ code: 'NETWORK_ERROR', offline: false });
    expect(host.calls.length - sent).toBe(3);
  });

  test('a request() that belongs to no installed host: no signals, no listeners', async () => {
    const service = await start();
    const host = createHost('wx');
    delete (globalThis as Record<string, unknown>).wx;
    const client = createClient({ baseUrl: service.url, tokenProvider: heldProvider(service), request: host.request });
    await client.get('/first');
    expect(host.life.listeners()).toEqual({ show: 0, hide: 0, network: 0 });
  });

  test('a host whose lifecycle functions throw (a plugin) gives no signal and fails no call', async () => {
    const service = await start();
    const host = createHost('wx');
    const throwing = () => {
      throw new Error('onAppShow:fail not supported in plugins');
    };
    Object.assign(host, { onAppShow: throwing, onAppHide: throwing, onNetworkStatusChange: throwing, getNetworkType: throwing });
    (globalThis as Record<string, unknown>).wx = host;
    const client = createClient({ baseUrl: service.url, tokenProvider: heldProvider(service), request: host.request });
    await expect(client.get('/first')).resolves.toMatchObject({ path: '/first' });
  });

  test('getNetworkType answering "none" at the start: the first GET waits for the network', async () => {
    const service = await start();
    const host = createHost('wx');
    (globalThis as Record<string, unknown>).wx = host;
    host.setNetwork({ isConnected: false });
    const client = createClient({ baseUrl: service.url, tokenProvider: heldProvider(service), request: host.request });
    const waits: unknown[] = [];
    client.on('wait', (w) => void waits.push(w));
    // The first call starts the client's listening; getNetworkType answers on a later turn, the
    // host fails that first attempt offline, and the GET waits for the network instead of retrying.
    const call = client.get('/first');
    await eventually(() => waits.length === 1, 'the wait');
    host.setNetwork({ isConnected: true });
    await expect(call).resolves.toMatchObject({ path: '/first' });
  });
});

describe("an app launched offline: the first calls wait for getNetworkType's answer", () => {
  const start = fakeServices();

  for (const kind of kinds) {
    test(`${kind}: the provider is not asked and nothing is sent; the first GET waits and resolves once online, the first POST fails offline`, async () => {
      const service = await start();
      const host = createHost(kind);
      (globalThis as Record<string, unknown>)[kind] = host;
      host.setNetwork({ isConnected: false });
      const provider = heldProvider(service);
      // A real provider's own request fails offline, sooner than getNetworkType answers.
      provider.state.fail = true;
      const client = createClient({ baseUrl: service.url, tokenProvider: provider, request: host.request });
      const waits: unknown[] = [];
      client.on('wait', (w) => void waits.push(w));
      const get = client.get('/first');
      const post = client.post('/write', { json: { a: 1 } });
      await expect(post).rejects.toMatchObject({ code: 'NETWORK_ERROR', offline: true });
      await eventually(() => waits.length === 1, 'the wait');
      expect({ provider: provider.calls.length, sent: host.calls.length }).toEqual({ provider: 0, sent: 0 });
      provider.state.fail = false;
      host.setNetwork({ isConnected: true });
      await expect(get).resolves.toMatchObject({ path: '/first' });
      expect({ provider: provider.calls.length, sent: host.calls.map((c) => c.url.replace(service.url, '')) }).toEqual({ provider: 1, sent: ['/first'] });
    });
  }

  test('a getNetworkType that never answers holds the first call a moment only (a second at most), then it goes', async () => {
    const service = await start();
    const host = createHost('wx');
    Object.assign(host, { getNetworkType: () => undefined });
    (globalThis as Record<string, unknown>).wx = host;
    const client = createClient({ baseUrl: service.url, tokenProvider: heldProvider(service), request: host.request });
    await expect(client.get('/first')).resolves.toMatchObject({ path: '/first' });
  });
});

describe("a request() that belongs to no host global follows the runtime's host (uni-app's uni, Taro's module)", () => {
  const start = fakeServices();
  const globals = globalThis as Record<string, unknown>;

  /**
   * uni-app (Vue 3) mini-program builds: `uni` is a Proxy (uni-mp-core's initUni) whose every
   * read of an API makes a new promisified function over the host's, so `uni.request !== uni.request`;
   * its on* functions are the host's own.
   */
  function uniProxy(platform: Record<string, unknown>): Record<string, unknown> {
    const promisify = (name: string, api: unknown) =>
      /^on|Sync$/.test(name) || typeof api !== 'function'
        ? api
        : function promiseApi(options: Record<string, unknown> = {}) {
            if (options.success || options.fail || options.complete) return (api as (o: unknown) => unknown)(options);
            return new Promise((resolve, reject) => (api as (o: unknown) => unknown)({ ...options, success: resolve, fail: reject }));
          };
    return new Proxy({}, { get: (_, key: string) => promisify(key, platform[key]) });
  }

  const wrappers = {
    // The docs' way to route the SDK's calls through uni.addInterceptor.
    'uni-app: request: uni.request (a Proxy global)': (host: Record<string, unknown>) => {
      const uni = uniProxy(host);
      globals.uni = uni;
      expect(uni.request).not.toBe(uni.request);
      return uni.request as (o: unknown) => unknown;
    },
    // Taro is a module in a mini-program build, not a global: its request wraps the host's.
    'Taro: request: Taro.request (a module)': (host: Record<string, unknown>) => {
      const Taro = { request: (o: unknown) => (host.request as (o: unknown) => unknown)(o) };
      return Taro.request;
    },
  };

  for (const [name, wrap] of Object.entries(wrappers)) {
    test(`${name}: the host's listeners; offline, a GET waits (nothing sent) and goes once the network is back`, async () => {
      const service = await start();
      const host = createHost('wx');
      const before = kinds.map((kind) => [kind, globals[kind]] as const);
      kinds.forEach((kind) => delete globals[kind]);
      globals.wx = host;
      try {
        const client = createClient({ baseUrl: service.url, tokenProvider: heldProvider(service), request: wrap(host as unknown as Record<string, unknown>) });
        const waits: unknown[] = [];
        client.on('wait', (w) => void waits.push(w));
        await client.get('/first');
        expect(host.life.listeners()).toEqual({ show: 1, hide: 1, network: 1 });
        host.setNetwork({ isConnected: false });
        const sent = host.calls.length;
        const call = client.get('/offline');
        await eventually(() => waits.length === 1, 'the wait');
        expect(host.calls.length).toBe(sent);
        host.setNetwork({ isConnected: true });
        await expect(call).resolves.toMatchObject({ path: '/offline' });
        expect(host.calls.length).toBe(sent + 1);
      } finally {
        kinds.forEach((kind) => delete globals[kind]);
        before.forEach(([kind, value]) => value !== undefined && (globals[kind] = value));
      }
    });
  }
});
