import type { SignalLike } from './types.js';

/** A cancel handle for hosts without `AbortController` (mini-programs). */
export interface CancelToken {
  /** Pass as a request's `signal`. */
  readonly signal: SignalLike;
  /** Cancels every request given this token's signal; `reason` becomes the AbortError's `cause`. */
  cancel(reason?: unknown): void;
}

/**
 * A small stand-in for `AbortController` where the host has none.
 * @example
 * const token = createCancelToken();
 * client.get('/open/api/v1/sdk/orders', { signal: token.signal });
 * onUnload() { token.cancel('page closed'); }
 */
export function createCancelToken(): CancelToken {
  // A Set, made at the first listener (the client makes one token per request): removing one
  // of many listeners stays O(1).
  let listeners: Set<() => void> | undefined;
  const signal = {
    aborted: false,
    reason: undefined as unknown,
    addEventListener(_type: 'abort', listener: () => void) {
      (listeners || (listeners = new Set())).add(listener);
    },
    removeEventListener(_type: 'abort', listener: () => void) {
      if (listeners) listeners.delete(listener);
    },
  };
  return {
    signal,
    cancel(reason?: unknown) {
      if (signal.aborted) return;
      signal.aborted = true;
      signal.reason = reason;
      const current: Array<() => void> = [];
      if (listeners) listeners.forEach((listener) => current.push(listener));
      listeners = undefined;
      for (const listener of current) listener();
    },
  };
}
