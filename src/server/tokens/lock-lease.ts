// A cross-instance lock held as a short lease: renewed while its holder's token call runs, so
// that a holder that dies (SIGKILL, a crash, a lost machine) holds the other instances off for
// one lease at most, not for the whole token timeout.
import type { TokenCacheLock } from './token-cache.js';

/** How long a lock lasts unless renewed: 3 s, or 3 cache timeouts when those are longer (each renewal may take one). */
export const lockLeaseMs = (cacheTimeout: number): number => Math.max(3000, 3 * cacheTimeout);

/**
 * How long a caller waits for another instance that holds the lock before it asks the service
 * itself: 5 s (or a lease and a second, when leases are longer), within the exchange's `timeout`.
 * Half the client's default `tokenTimeout`: a waiter still has time for a call of its own.
 */
export const lockWaitMs = (timeout: number, leaseMs: number): number => Math.min(timeout, Math.max(5000, leaseMs + 1000));

/**
 * Renews `lock` every third of `leaseMs` through `renew` (which bounds and reports each call)
 * until the returned function is called. A lock without `renew` (a cache of the earlier
 * interface) is left to its TTL.
 */
export function keepLease(
  lock: TokenCacheLock,
  leaseMs: number,
  renew: (lock: TokenCacheLock & Required<Pick<TokenCacheLock, 'renew'>>) => unknown,
): () => void {
  if (typeof lock.renew !== 'function') return () => {};
  const held = lock as TokenCacheLock & Required<Pick<TokenCacheLock, 'renew'>>;
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return; // the last renewal has not answered yet
    busy = true;
    void Promise.resolve(renew(held)).finally(() => (busy = false));
  }, leaseMs / 3);
  (timer as { unref?: () => void }).unref?.();
  return () => clearInterval(timer);
}
