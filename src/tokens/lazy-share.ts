import type { TokenShare } from '../core/token-manager.js';

/**
 * A share whose implementation is still loading (a dynamic import): calls wait for it, and
 * where it turns out unavailable the client simply asks its own provider.
 */
export function lazyShare(load: Promise<TokenShare | undefined>): TokenShare {
  const ready = load.then(undefined, () => undefined);
  return {
    obtain: (stale, fetch) => ready.then((share) => (share ? share.obtain(stale, fetch) : fetch())),
    clear: () => void ready.then((share) => share && share.clear()),
    connect: (adopt, cleared) => void ready.then((share) => share && share.connect(adopt, cleared)),
  };
}
