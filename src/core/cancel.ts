import type { SignalLike } from './types.js';

/** A cancel handle for hosts without `AbortController` (mini-programs). */
export interface CancelToken {
  /** Pass as a request's `signal`. */
  readonly signal: SignalLike;
  /** Cancels every request given this token's signal; `reason` becomes the AbortError's `cause`. */
  cancel(reason?: unknown): void;
}

/**
 * A signal and its cancel in one object, with its methods on the prototype: the client makes
 * one per request (the logout fence), so it is kept to a single small allocation.
 */
export class Stop implements SignalLike {
  aborted = false;
  reason: unknown = undefined;
  // A Set even for the one listener an attempt adds: holding a lone listener without one saved
  // no measurable time per call (bench:fetch) and made the client bundles larger
  // (docs/maintainers/size.md, #32 follow-up 2).
  private listeners: Set<() => void> | undefined = undefined;

  addEventListener(_type: 'abort', listener: () => void): void {
    (this.listeners || (this.listeners = new Set())).add(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    if (this.listeners) this.listeners.delete(listener);
  }

  cancel(reason?: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    // Detached before the calls: a listener that removes or adds one does not touch this set.
    const current = this.listeners;
    this.listeners = undefined;
    if (current) current.forEach((listener) => listener());
  }
}

/**
 * A small stand-in for `AbortController` where the host has none.
 * @example
 * const token = createCancelToken();
 * client.get('/open/api/v1/sdk/orders', { signal: token.signal });
 * onUnload() { token.cancel('page closed'); }
 */
export function createCancelToken(): CancelToken {
  const stop = new Stop();
  return { signal: stop, cancel: (reason?: unknown) => stop.cancel(reason) };
}
