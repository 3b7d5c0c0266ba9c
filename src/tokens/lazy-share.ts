import type { TokenShare } from '../core/token-manager.js';

/**
 * A share whose implementation is still loading (a dynamic import): calls wait for it, and
 * where it turns out unavailable the client simply asks its own provider.
 */
export function lazyShare(load: Promise<TokenShare | undefined>): TokenShare {
  let real: TokenShare | undefined;
  const ready = load.then(
    (share) => (real = share),
    () => undefined,
  );
  return {
    obtain: (stale, fetch) => ready.then(() => (real ? real.obtain(stale, fetch) : fetch())),
    clear: () => void ready.then(() => real && real.clear()),
    connect: (adopt, cleared) => void ready.then(() => real && real.connect(adopt, cleared)),
  };
}
