import { checkKeys, describeValue, fail } from '../shared/check.js';
import { userKey } from '../core/token-lifecycle/user-key.js';
import type { StoredToken, TokenStore } from '../core/types.js';
import { findHost, HOST_NAMES } from '../transports/miniprogram/host-globals.js';

/** The host storage functions a store uses: WeChat-style `(key, data)`, or Alipay's `({ key, data })`. */
export interface HostStorage {
  getStorageSync(key: unknown): unknown;
  setStorageSync(key: unknown, data?: unknown): unknown;
  removeStorageSync(key: unknown): unknown;
}

/** Options of {@link hostTokenStore}. */
export interface HostTokenStoreOptions {
  /**
   * Whose token it is: a function returning the signed-in user id (null or undefined when
   * nobody is), read at every use, so one client serves every user of the run. A token is
   * restored only for the user it was asked for, and a logout (`clearToken()`) removes it
   * whatever the user is by then. A fixed string works for a client made after sign-in and
   * dropped at logout: after `clearToken()` it keeps nothing more.
   * @example key: () => getApp().globalData.userId
   */
  key: string | (() => string | null | undefined);
  /**
   * The host object with `getStorageSync`, `setStorageSync`, `removeStorageSync` (e.g. `wx`).
   * @default the first of wx, my, tt, swan, qq, uni, Taro found
   */
  storage?: HostStorage;
  /** Set when `storage` is Alipay's `my` (object arguments); detected for the `my` global. @default false */
  alipay?: boolean;
}

/**
 * A {@link TokenStore} over the mini-program host's synchronous storage, so that a cold
 * start within the token's lifetime asks the provider nothing. One record per service, under
 * `channel-sdk:token <baseUrl>`: the token with its receipt time, end, service and the user it
 * was asked for; clearToken() removes the client's own.
 * @example
 * const client = createClient({ baseUrl, tokenProvider, tokenStore: hostTokenStore({ key: () => app.globalData.userId }) });
 */
export function hostTokenStore(options: HostTokenStoreOptions): TokenStore {
  const { key } = options || ({} as HostTokenStoreOptions);
  if (typeof key !== 'function' && (typeof key !== 'string' || !key)) {
    fail("hostTokenStore needs { key }: a function returning the signed-in user id, so that one user never gets another's token; got " + describeValue(key));
  }
  checkKeys(options, ['key', 'storage', 'alipay'], 'hostTokenStore option');
  let storage = options.storage;
  let alipay = !!options.alipay;
  if (!storage) {
    const found = findHost('setStorageSync');
    if (!found) fail('hostTokenStore found no host storage (' + HOST_NAMES.join(', ') + '); pass storage: wx');
    storage = found[1] as unknown as HostStorage;
    alipay = found[0] === 'my';
  }
  const s = storage as HostStorage;
  // One record per service: two clients of different baseUrls never read each other's.
  const slot = (service: string) => 'channel-sdk:token ' + service;
  // A string names one user for the client's life: the store has no key() then, so the
  // client stops saving at its first logout.
  const current = typeof key === 'function' ? () => userKey(key()) : () => key;
  const store: TokenStore = {
    get(service) {
      const name = slot(service);
      const raw = alipay ? ((s.getStorageSync({ key: name }) || {}) as { data?: unknown }).data : s.getStorageSync(name);
      const value = typeof raw === 'string' && raw ? (JSON.parse(raw) as StoredToken) : undefined;
      const user = current();
      return value && user && value.key === user ? value : undefined;
    },
    set(value) {
      const name = slot(value.service as string);
      const data = JSON.stringify({
        key: value.key || current(),
        token: value.token,
        receivedAt: value.receivedAt,
        expiresAt: value.expiresAt,
        service: value.service,
      });
      if (alipay) s.setStorageSync({ key: name, data });
      else s.setStorageSync(name, data);
    },
    remove(service) {
      s.removeStorageSync(alipay ? { key: slot(service) } : slot(service));
    },
  };
  if (typeof key === 'function') store.key = key;
  return store;
}
