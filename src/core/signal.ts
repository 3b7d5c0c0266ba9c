import { AbortError } from '../errors/AbortError.js';
import type { ErrorContext } from '../errors/ChannelError.js';
import type { SignalLike } from './types.js';

/**
 * The reason a request's own signal gets when clearToken() fences it, or a new tokenStore
 * key() (another user signed in without clearToken()).
 */
export const cleared = { clearToken: true };

/**
 * The AbortError for a request whose signal fired. Built without stack frames: its stack
 * would only show the abort machinery, and one signal may cancel thousands of requests at
 * once (capturing frames is 90% of an error's cost: 10,000 take 30 ms with, 3 ms without).
 */
export function abortError(signal: SignalLike, context: ErrorContext): AbortError {
  const E = Error as { stackTraceLimit?: number };
  const limit = E.stackTraceLimit;
  E.stackTraceLimit = 0;
  try {
    if (signal.reason === cleared) return new AbortError('clearToken() ran while this request was under way (a logout, or a new tokenStore key()); it is not sent again, with any token', context);
    const error = new AbortError('request aborted through its signal', context);
    if (signal.reason !== undefined) (error as { cause?: unknown }).cause = signal.reason;
    return error;
  } finally {
    E.stackTraceLimit = limit;
  }
}

// One 'abort' listener per signal however many requests share it: Node warns past 10
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
 * Settles like `promise`, or rejects with AbortError as soon as `signal` aborts. The
 * promise itself goes on: a token refresh shared with other requests must not be cancelled.
 */
export function raceSignal<T>(promise: Promise<T>, signal: SignalLike, context: ErrorContext, shared = true): Promise<T> {
  if (signal.aborted) return Promise.reject(abortError(signal, context));
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(abortError(signal, context));
    // A signal of one request's own is listened to directly; a shared one through onAbort.
    const off = shared
      ? onAbort(signal, stop)
      : (signal.addEventListener('abort', stop), () => signal.removeEventListener('abort', stop));
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

/** Waits `ms`, or rejects with AbortError when `signal` (a request's own) aborts first. */
export function sleep(ms: number, signal: SignalLike, context: ErrorContext): Promise<void> {
  let timer = 0 as unknown as ReturnType<typeof setTimeout>;
  const wait = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  return raceSignal(wait, signal, context, false).then(undefined, (error: unknown) => {
    clearTimeout(timer);
    throw error;
  });
}
