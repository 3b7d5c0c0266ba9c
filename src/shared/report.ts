/**
 * The user's reporter (`onError`, `onCacheError`...), called so that a throwing one changes
 * nothing: not the answer a route gives, not a working fallback, and nothing throws out of a timer.
 */
export function safeReport<A extends unknown[]>(reporter: (...args: A) => unknown): (...args: A) => void {
  return quietly(reporter);
}

/**
 * `f`, except that what it throws is dropped and `fallback` returned instead: a user's tracer,
 * meter or reporter that throws costs the caller nothing.
 */
export function quietly<A extends unknown[], R>(f: (...args: A) => R, fallback?: R): (...args: A) => R {
  return (...args) => {
    try {
      return f(...args);
    } catch {
      return fallback as R;
    }
  };
}

/**
 * Drops a rejection of `value` when it is a promise (or a thenable) a user's tracer returned
 * from `startActiveSpan` (an async wrapper whose own setup failed): nobody else holds it, and an
 * unhandled rejection ends a Node process.
 */
export function dropRejection(value: unknown, depth = 0): void {
  // Anything else (undefined, a value without then) throws here, quietly.
  const next = quietly(() => (value as Promise<unknown>).then(undefined, () => {}))();
  // A thenable of the tracer's own may hand back what it did not handle itself (a then that
  // forwards onFulfilled only returns the rejection): that is dropped too, two levels deep.
  if (depth < 2) dropRejection(next, depth + 1);
}

/**
 * Runs `f`, a user's callback; what it throws surfaces as an uncaught error, as a host or an event
 * emitter reports a listener's, and stops nothing else (the next listener, `complete`).
 */
export function isolated(f: () => void): void {
  try {
    f();
  } catch (error) {
    setTimeout(() => {
      throw error;
    });
  }
}
