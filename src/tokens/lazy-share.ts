import type { TokenShare } from '../core/token-lifecycle/token-types.js';

/**
 * A share whose implementation is still loading (a dynamic import): calls wait for it, and
 * where it turns out unavailable the client simply asks its own provider. Once loaded, clear()
 * reaches it synchronously: clearToken() takes effect before the next message is handled.
 */
export function lazyShare(load: Promise<TokenShare | undefined>): TokenShare {
  let loaded: TokenShare | undefined;
  const ready = load.then(
    (share) => (loaded = share),
    () => undefined,
  );
  return {
    obtain: (stale, fetch) => ready.then((share) => (share ? share.obtain(stale, fetch) : fetch())),
    clear: () => (loaded ? loaded.clear() : void ready.then((share) => share && share.clear())),
    connect: (adopt, cleared) => void ready.then((share) => share && share.connect(adopt, cleared)),
  };
}
