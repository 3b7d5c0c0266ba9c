import { describe, fail } from '../core/check.js';
import type { StoredToken, TokenStore } from '../core/types.js';
import { findHost } from '../transports/hosts.js';

/** The host storage functions a store uses: WeChat-style `(key, data)`, or Alipay's `({ key, data })`. */
export interface HostStorage {
  getStorageSync(key: unknown): unknown;
  setStorageSync(key: unknown, data?: unknown): unknown;
  removeStorageSync(key: unknown): unknown;
}

/** Options of {@link hostTokenStore}. */
export interface HostTokenStoreOptions {
  /** Whose token it is, e.g. the signed-in user id: a token saved under another key is never used. */
  key: string;
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
 * start within the token's lifetime asks the provider nothing. The token is kept with its
 * receipt time and lifetime under `channel-sdk:token:<key>`; clearToken() removes it.
 * @example
 * const client = createClient({ baseUrl, tokenProvider, tokenStore: hostTokenStore({ key: userId }) });
 */
export function hostTokenStore(options: HostTokenStoreOptions): TokenStore {
  const { key } = options || ({} as HostTokenStoreOptions);
  if (typeof key !== 'string' || !key) fail('hostTokenStore needs { key }: the signed-in user id, so that one user never gets another\'s token; got ' + describe(key));
  let storage = options.storage;
  let alipay = !!options.alipay;
  if (!storage) {
    const found = findHost('setStorageSync');
    if (!found) fail('hostTokenStore found no host storage (wx, my, tt, swan, qq, uni, Taro); pass storage: wx');
    storage = found[1] as unknown as HostStorage;
    alipay = found[0] === 'my';
  }
  const s = storage as HostStorage;
  const name = 'channel-sdk:token:' + key;
  return {
    get() {
      const raw = alipay ? ((s.getStorageSync({ key: name }) || {}) as { data?: unknown }).data : s.getStorageSync(name);
      const value = typeof raw === 'string' && raw ? (JSON.parse(raw) as StoredToken & { key?: string }) : undefined;
      return value && value.key === key ? { token: value.token, receivedAt: value.receivedAt, expiresAt: value.expiresAt } : undefined;
    },
    set(value) {
      const data = JSON.stringify({ key, token: value.token, receivedAt: value.receivedAt, expiresAt: value.expiresAt });
      if (alipay) s.setStorageSync({ key: name, data });
      else s.setStorageSync(name, data);
    },
    remove() {
      s.removeStorageSync(alipay ? { key: name } : name);
    },
  };
}
