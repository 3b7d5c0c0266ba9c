import type { TokenStore } from '../types.js';

/** A user key as a non-empty string (a number id too), else undefined: nobody signed in. */
export function userKey(value: unknown): string | undefined {
  return (typeof value === 'string' && value) || (typeof value === 'number' && isFinite(value)) ? String(value) : undefined;
}

/** Reads `store`'s key() as a user key (a key() that throws: nobody signed in); undefined for a store without key(). */
export function storeKeyReader(store: TokenStore | undefined): (() => string | undefined) | undefined {
  return store && typeof store.key === 'function'
    ? () => {
        try {
          return userKey((store.key as () => unknown)());
        } catch {
          return undefined;
        }
      }
    : undefined;
}
