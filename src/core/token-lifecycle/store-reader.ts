import { isJwt } from './jwt-claims.js';
import type { Obtained, TokenManagerOptions } from './token-types.js';
import type { StoredToken, TokenStore } from '../types.js';

/**
 * Reads a {@link TokenStore} for the first token of a session: a record is taken only for the
 * service it was saved for and (`keyed`: the store has key()) the key it was saved under.
 */
export function createStoreReader(
  store: TokenStore,
  keyed: boolean,
  options: Pick<TokenManagerOptions, 'tokenTimeout' | 'now' | 'refreshLeeway' | 'service'>,
): (key: string | undefined) => Promise<Obtained | undefined> {
  const { now, refreshLeeway, service } = options;
  /**
   * The stored token, if it belongs to this service (baseUrl) and to `key` (with key()) and is still good for a while:
   * received no later than now (a clock set back would stretch its life) and at least the
   * refresh leeway (5 s at least) before its end. Whatever the store does (throws, hangs,
   * returns junk), the provider is asked.
   */
  return function restore(key: string | undefined): Promise<Obtained | undefined> {
    if (keyed && !key) return Promise.resolve(undefined);
    return new Promise<unknown>((resolve) => {
      const timer = setTimeout(resolve, options.tokenTimeout);
      const done = (value?: unknown) => {
        clearTimeout(timer);
        resolve(value);
      };
      new Promise((inner) => inner(store.get(service))).then(done, () => done());
    }).then((found) => {
      const r = found as StoredToken | undefined;
      if (!r || typeof r !== 'object' || !isJwt(r.token) || r.service !== service || (keyed && r.key !== key)) return undefined;
      const life = r.expiresAt - r.receivedAt;
      const t = now();
      return t >= r.receivedAt && t < r.expiresAt - Math.min(Math.max(refreshLeeway * 1000, 5000), life / 2)
        ? { token: r.token, receivedAt: r.receivedAt, stored: true, until: r.expiresAt }
        : undefined;
    });
  };
}
