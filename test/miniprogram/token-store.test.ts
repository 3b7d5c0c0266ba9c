/**
 * A token kept through a relaunch (issue #15): each host family's synchronous storage,
 * emulated as the host documents it (WeChat family: (key, data), '' for a missing key, values
 * stored as JSON copies; Alipay: ({ key, data }) and { data } back), shared by several
 * "launches" — separate node:vm realms running miniprogram_dist/index.js, as a cold start would.
 * Needs `npm run build` first (npm test does it).
 */
import { readFileSync } from 'node:fs';
import vm from 'node:vm';
import { afterEach, describe, expect, test } from 'vitest';
import { createClock, startFakeService, type FakeService } from '../helpers/fake-service.js';
import { createHost, type HostKind } from '../helpers/hosts.js';

const code = readFileSync('miniprogram_dist/index.js', 'utf8');

/** One device's storage, as the host family exposes it. `broken` makes every call throw (storage full, quota). */
function createStorage(kind: HostKind, broken = false) {
  const data = new Map<string, unknown>();
  const check = () => {
    if (broken) throw new Error(kind + ':storage fail (provoked by the test)');
  };
  const copy = (value: unknown) => JSON.parse(JSON.stringify(value)) as unknown;
  const api =
    kind === 'my'
      ? {
          getStorageSync: ({ key }: { key: string }) => (check(), { data: data.has(key) ? data.get(key) : null }),
          setStorageSync: ({ key, data: value }: { key: string; data: unknown }) => (check(), void data.set(key, copy(value))),
          removeStorageSync: ({ key }: { key: string }) => (check(), void data.delete(key)),
        }
      : {
          getStorageSync: (key: string) => (check(), data.has(key) ? data.get(key) : ''),
          setStorageSync: (key: string, value: unknown) => (check(), void data.set(key, copy(value))),
          removeStorageSync: (key: string) => (check(), void data.delete(key)),
        };
  return { api, data };
}

let service: FakeService;
afterEach(() => service?.close());

/** A cold start: a fresh realm with the host global, the bundle loaded, one client made. */
function launch(kind: HostKind, storage: object, key: string, now: () => number) {
  const calls: boolean[] = [];
  const host = { ...createHost(kind), ...storage };
  const context = vm.createContext({ setTimeout, clearTimeout, [kind]: host });
  const module = { exports: {} as Record<string, unknown> };
  vm.runInContext(`(function (module, exports) {${code}\n})`, context)(module, module.exports);
  const sdk = module.exports as {
    createClient(o: object): { get(p: string): Promise<unknown>; clearToken(): void };
    hostTokenStore(o: object): object;
  };
  const client = sdk.createClient({
    baseUrl: service.url,
    now,
    tokenProvider: ({ forceRefresh }: { forceRefresh: boolean }) => (calls.push(forceRefresh), service.issue(key)),
    tokenStore: sdk.hostTokenStore({ key }),
  });
  return { client, calls };
}

const families: HostKind[] = ['wx', 'my', 'tt', 'swan', 'qq', 'uni', 'Taro'];

describe.each(families)('hostTokenStore over %s storage', (kind) => {
  test('a relaunch within the lifetime asks nothing; another key, an expired token and a logout ask again; 0 expired tokens sent', async () => {
    const clock = createClock();
    service = await startFakeService({ clock, ttl: 900 });
    const { api, data } = createStorage(kind);

    const first = launch(kind, api, 'user-1', clock.now);
    await first.client.get('/a');
    expect(first.calls).toEqual([false]);
    expect([...data.keys()]).toEqual(['channel-sdk:token:user-1']);

    clock.advance(60_000);
    const second = launch(kind, api, 'user-1', clock.now);
    await second.client.get('/b');
    expect(second.calls).toEqual([]);
    expect(service.hits[1].token).toBe(service.hits[0].token);

    const otherUser = launch(kind, api, 'user-2', clock.now);
    await otherUser.client.get('/c');
    expect(otherUser.calls).toEqual([false]);
    expect(service.hits[2].token).not.toBe(service.hits[0].token);

    clock.advance(900_000);
    const afterExpiry = launch(kind, api, 'user-1', clock.now);
    await afterExpiry.client.get('/d');
    expect(afterExpiry.calls).toEqual([false]);

    afterExpiry.client.clearToken();
    expect([...data.keys()]).toEqual(['channel-sdk:token:user-2']);
    const afterLogout = launch(kind, api, 'user-1', clock.now);
    await afterLogout.client.get('/e');
    expect(afterLogout.calls).toEqual([false]);

    // Every hit carried a token the service still accepted: none expired, none 401.
    expect(service.hits.map((h) => h.status)).toEqual([200, 200, 200, 200, 200]);
  });

  test('a token near its end is not restored (it would expire in flight); a broken storage never fails a request', async () => {
    const clock = createClock();
    service = await startFakeService({ clock, ttl: 900 });
    const { api } = createStorage(kind);
    await launch(kind, api, 'user-1', clock.now).client.get('/a');
    clock.advance(870_000); // 30 s left, inside the 60 s refresh leeway
    const late = launch(kind, api, 'user-1', clock.now);
    await late.client.get('/b');
    expect(late.calls).toEqual([false]);

    const broken = createStorage(kind, true);
    for (let i = 0; i < 2; i++) {
      const run = launch(kind, broken.api, 'user-1', clock.now);
      await expect(run.client.get('/c')).resolves.toBeTruthy();
      expect(run.calls).toEqual([false]);
      run.client.clearToken();
    }
  });
});

test('a record saved under another key, or junk, in the slot is never used', async () => {
  const clock = createClock();
  service = await startFakeService({ clock });
  const { api, data } = createStorage('wx');
  await launch('wx', api, 'user-1', clock.now).client.get('/a');
  // Someone copies user-1's record into user-2's slot: the record names its key.
  data.set('channel-sdk:token:user-2', data.get('channel-sdk:token:user-1'));
  const copied = launch('wx', api, 'user-2', clock.now);
  await copied.client.get('/b');
  expect(copied.calls).toEqual([false]);
  data.set('channel-sdk:token:user-3', '{not json');
  const junk = launch('wx', api, 'user-3', clock.now);
  await junk.client.get('/c');
  expect(junk.calls).toEqual([false]);
});
