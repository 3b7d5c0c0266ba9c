// Signals and timers, for the client and the server alike: a signal that may be shared by
// thousands of calls, a promise raced against one, a wait.

/**
 * The part of an `AbortSignal` the SDK uses. A real `AbortSignal` fits; on a host
 * without `AbortController` (mini-programs) any object of this shape does.
 */
export interface SignalLike {
  readonly aborted: boolean;
  readonly reason?: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/** The largest delay a timer can hold (2^31 - 1 ms, about 24.8 days). */
export const MAX_DELAY = 2147483647;

// One 'abort' listener per signal however many calls share it: Node warns past 10
// listeners on an AbortSignal, and removing one from a long list is O(n).
const subscribers = new WeakMap<SignalLike, Set<() => void>>();

/** Calls `fn` once when `signal` aborts; returns the unsubscribe. The signal must not be aborted yet. */
export function onAbort(signal: SignalLike, fn: () => void): () => void {
  let set = subscribers.get(signal);
  if (!set) {
    const fresh = new Set<() => void>();
    set = fresh;
    subscribers.set(signal, fresh);
    signal.addEventListener(
      'abort',
      () => {
        subscribers.delete(signal);
        fresh.forEach((f) => f());
      },
      { once: true },
    );
  }
  const own = set;
  own.add(fn);
  return () => void own.delete(fn);
}

/**
 * Settles like `promise`, or rejects with `aborted()` as soon as `signal` aborts. The promise
 * itself goes on: a call shared with other callers (a token refresh, a token exchange's flight)
 * must not be cancelled. `shared`: the signal may be shared by many calls, so it is listened to
 * through {@link onAbort}; a signal of one call's own is listened to directly.
 */
export function raceSignal<T>(promise: Promise<T>, signal: SignalLike, aborted: () => unknown, shared = true): Promise<T> {
  if (signal.aborted) return Promise.reject(aborted());
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(aborted());
    const off = shared ? onAbort(signal, stop) : (signal.addEventListener('abort', stop), () => signal.removeEventListener('abort', stop));
    promise.then(
      (value) => {
        off();
        resolve(value);
      },
      (error: unknown) => {
        off();
        reject(error);
      },
    );
  });
}

/** Waits `ms`; with a signal (a call's own), rejects with `aborted()` when it aborts first. */
export function sleep(ms: number, signal?: SignalLike, aborted?: () => unknown): Promise<void> {
  let timer = 0 as unknown as ReturnType<typeof setTimeout>;
  const wait = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  if (!signal) return wait;
  return raceSignal(wait, signal, aborted as () => unknown, false).then(undefined, (error: unknown) => {
    clearTimeout(timer);
    throw error;
  });
}
