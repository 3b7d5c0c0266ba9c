/**
 * The user's reporter (`onError`, `onCacheError`...), called so that a throwing one changes
 * nothing: not the answer a route gives, not a working fallback, and nothing throws out of a timer.
 */
export function safeReport<A extends unknown[]>(reporter: (...args: A) => unknown): (...args: A) => void {
  return (...args) => {
    try {
      reporter(...args);
    } catch {
      // ignored on purpose
    }
  };
}
