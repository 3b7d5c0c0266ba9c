// @vitest-environment node
// The app's life and the network (issue #45) over every mini-program host emulation, each with
// its own onAppShow/onAppHide, onNetworkStatusChange and getNetworkType payloads, installed as its
// global (the client finds them on the host whose request() it was given).
import { describe, expect, test } from 'vitest';
import { createClient } from '../../src/miniprogram.js';
import { createHost, type HostKind } from '../helpers/hosts.js';
import { appLifeSuite, heldProvider, hostLifeSuite, type LifeFactory } from './app-life.js';
import { fakeServices } from './suite.js';

const kinds: HostKind[] = ['wx', 'my', 'tt', 'swan', 'qq', 'uni', 'Taro'];

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
});
