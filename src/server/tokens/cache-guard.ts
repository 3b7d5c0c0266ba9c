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
  /** A call given up because its caller's budget ran out (not a failure: the breaker stays closed). */
  overran(operation: Operation): void;
  /** A lock granted after its caller gave up on it: give it back. */
  lateLock(lock: TokenCacheLock): void;
  /** The cache's own `connecting()`, if it has one (see `TokenCache.connecting`). */
  connecting?: () => unknown;
}

/** Milliseconds, from the first call that found the cache's client connecting, during which calls wait for it. */
export const CONNECT_WAIT_MS = 2000;

/** How one cache call is run. */
export interface CallOptions {
  /** Run even while the breaker is open (a lock release, a renewal: they only free or keep what is ours). */
  always?: boolean;
  /**
   * Epoch ms by which the caller must have its answer (its budget for the whole cache path):
   * the call is bounded by the sooner of this and `timeoutMs`, and not made at all when it has
   * passed. Running out of budget is not a failure of the cache: the breaker stays as it is.
   */
  until?: number;
}

export interface CacheGuard {
  /**
   * Runs one cache call: synchronously when it answers synchronously (the in-memory hit path),
   * FAILED at once while the breaker is open, else bounded by `timeoutMs` (and the budget).
   */
  call<T>(operation: Operation, run: () => T | PromiseLike<T>, options?: CallOptions): Outcome<T> | Promise<Outcome<T>>;
  /**
   * Undefined when calls may go ahead; while the cache's client makes its first connection, a
   * promise that resolves once it is done or the connect wait has run out (never rejects).
   */
  connected(): Promise<void> | undefined;
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

  // The client's first connection: calls wait for it (one wait, up to CONNECT_WAIT_MS from the
  // first call that found it connecting) instead of timing out. Once it is over, never again.
  let connectDone = o.connecting === undefined;
  let connectWait: Promise<void> | undefined;
  function connected(): Promise<void> | undefined {
    if (connectDone) return undefined;
    if (connectWait) return connectWait;
    let pending: unknown;
    try {
      pending = (o.connecting as () => unknown)();
    } catch {
      pending = undefined;
    }
    if (!isThenable<unknown>(pending)) {
      connectDone = true;
      return undefined;
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    const over = () => {
      clearTimeout(timer);
      connectDone = true;
      connectWait = undefined;
    };
    connectWait = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, CONNECT_WAIT_MS);
      (timer as { unref?: () => void }).unref?.();
      Promise.resolve(pending).then(
        () => resolve(),
        () => resolve(),
      );
    }).then(over);
    return connectWait;
  }

  return {
    connected,
    call<T>(operation: Operation, run: () => T | PromiseLike<T>, options: CallOptions = {}): Outcome<T> | Promise<Outcome<T>> {
      let probe = false;
      if (open && !options.always) {
        if (probing || Date.now() < openUntil) return FAILED;
        probe = probing = true;
      }
      const succeeded = () => {
        if (probe) open = probing = false;
      };
      // What is left of the caller's budget, when it is shorter than the call's own bound.
      const left = options.until === undefined ? o.timeoutMs : Math.min(o.timeoutMs, options.until - Date.now());
      if (left <= 0) {
        if (probe) probing = false;
        o.overran(operation);
        return FAILED;
      }
      const byBudget = left < o.timeoutMs;
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
        left,
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
          if (error === TIMED_OUT && byBudget) {
            // The caller's budget ran out, not the cache's bound: no verdict on the cache.
            if (probe) probing = false;
            o.overran(operation);
          } else trip(operation, error === TIMED_OUT ? 'timeout' : 'error', error === TIMED_OUT ? undefined : error, probe);
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
