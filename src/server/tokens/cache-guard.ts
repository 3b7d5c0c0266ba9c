// What stands between the token exchange and its cache: every cache call bounded by a short
// timeout, and a circuit breaker, so that a frozen or unreachable Redis costs one caller one
// bound per cool-down instead of every caller a bound on every call.
import { bounded, isThenable } from '../../shared/bounded.js';
import type { TokenCacheErrorInfo, TokenCacheLock } from './token-cache.js';

/** What a guarded cache call resolves to when it failed, timed out or was skipped. */
export const FAILED: unique symbol = Symbol('cache call failed');
export type Outcome<T> = T | typeof FAILED;

type Operation = TokenCacheErrorInfo['operation'];
const GAVE_UP: unique symbol = Symbol('gave up');
const TIMED_OUT = { timedOut: true };

export interface CacheGuardOptions {
  /** Milliseconds each cache call may take. */
  timeoutMs: number;
  /** Milliseconds the cache is skipped after a failure; 0: never skipped, every call tries it. */
  cooldownMs: number;
  /** A failure worth telling: the one that opened the breaker, a failed probe, or any with no breaker. */
  report(operation: Operation, reason: 'timeout' | 'error', error: unknown, skipMs: number): void;
  /** A lock granted after its caller gave up on it: give it back. */
  lateLock(lock: TokenCacheLock): void;
}

export interface CacheGuard {
  /**
   * Runs one cache call: synchronously when it answers synchronously (the in-memory hit path),
   * FAILED at once while the breaker is open, else bounded by `timeoutMs`. `always`: run even
   * while the breaker is open (a lock release, which only frees other instances sooner).
   */
  call<T>(operation: Operation, run: () => T | PromiseLike<T>, always?: boolean): Outcome<T> | Promise<Outcome<T>>;
  /** True while cache calls are being skipped (the cool-down, or a probe under way). */
  skipping(): boolean;
}

// After the timers, I/O: an answer that arrived while this process was busy is read before the
// call is declared timed out (Node's setImmediate runs after the poll phase; elsewhere a 0 timer).
const afterIo: (fn: () => void) => void = typeof setImmediate === 'function' ? (fn) => void setImmediate(fn) : (fn) => void setTimeout(fn, 0);

/**
 * Closed: every call goes to the cache. The first failure (an error, or no answer within the
 * bound) opens the breaker: every call waiting on the cache gives up at once, and for
 * `cooldownMs` no call is made. Then one call probes: its success closes the breaker, its
 * failure opens it for another cool-down. Only the opening failure and failed probes are
 * reported, so a long outage is one report per cool-down.
 */
export function createCacheGuard(o: CacheGuardOptions): CacheGuard {
  let open = false;
  let openUntil = 0;
  let probing = false;
  // The calls still waiting on the cache: opening the breaker releases them all.
  const waiting = new Set<() => void>();

  function trip(operation: Operation, reason: 'timeout' | 'error', error: unknown, probe: boolean): void {
    if (o.cooldownMs === 0) return o.report(operation, reason, error, 0);
    if (open && !probe) return; // told already: the breaker is open
    open = true;
    probing = false;
    openUntil = Date.now() + o.cooldownMs;
    o.report(operation, reason, error, o.cooldownMs);
    for (const giveUp of waiting) giveUp(); // each call then stops waiting and leaves the set
  }

  return {
    skipping: () => open && (probing || Date.now() < openUntil),
    call<T>(operation: Operation, run: () => T | PromiseLike<T>, always = false): Outcome<T> | Promise<Outcome<T>> {
      let probe = false;
      if (open && !always) {
        if (probing || Date.now() < openUntil) return FAILED;
        probe = probing = true;
      }
      const succeeded = () => {
        if (probe) open = probing = false;
      };
      let result: T | PromiseLike<T>;
      try {
        result = run();
      } catch (error) {
        trip(operation, 'error', error, probe);
        return FAILED;
      }
      if (!isThenable<T>(result)) {
        succeeded();
        return result;
      }
      // Opening the breaker (another call's failure) stops the wait at once.
      let giveUp!: () => void;
      const abandoned = new Promise<typeof GAVE_UP>((resolve) => (giveUp = () => resolve(GAVE_UP)));
      waiting.add(giveUp);
      const pending = result;
      const outcome: Promise<Outcome<T>> = bounded<T | typeof GAVE_UP>(
        () => Promise.race([pending, abandoned]),
        o.timeoutMs,
        () => TIMED_OUT,
        afterIo,
      ).then(
        (value) => {
          waiting.delete(giveUp);
          if (value === GAVE_UP) return FAILED;
          succeeded();
          return value as T;
        },
        (error: unknown) => {
          waiting.delete(giveUp);
          trip(operation, error === TIMED_OUT ? 'timeout' : 'error', error === TIMED_OUT ? undefined : error, probe);
          return FAILED;
        },
      );
      // A lock granted after we gave up on it (a frozen Redis thawed, a command resent after a
      // reconnect): give it back, or it would hold off every instance until it expires.
      pending.then(
        (value) => {
          const late = value as Partial<TokenCacheLock> | undefined;
          if (operation === 'lock' && typeof late?.release === 'function') void outcome.then((got) => got === FAILED && o.lateLock(late as TokenCacheLock));
        },
        () => {},
      );
      return outcome;
    },
  };
}
