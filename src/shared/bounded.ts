/** A promise or any other thenable (a cache's or store's answer may be either). */
export const isThenable = <T>(value: unknown): value is PromiseLike<T> => typeof (value as PromiseLike<T> | null)?.then === 'function';

/**
 * Runs a call (a store's, a cache's), refusing to wait for it longer than `ms`: a synchronous
 * answer or throw settles at once, a promise is raced against a timer that rejects with `late()`.
 * `defer` postpones that verdict (e.g. past pending I/O, so that an answer that arrived while the
 * process was busy still counts).
 */
export function bounded<T>(call: () => T | PromiseLike<T>, ms: number, late: () => unknown, defer?: (verdict: () => void) => void): Promise<T> {
  let result: T | PromiseLike<T>;
  try {
    result = call();
  } catch (error) {
    return Promise.reject(error);
  }
  if (!isThenable<T>(result)) return Promise.resolve(result);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    const verdict = () => reject(late());
    timer = setTimeout(() => (defer ? defer(verdict) : verdict()), ms);
  });
  return Promise.race([Promise.resolve(result), timeout]).finally(() => clearTimeout(timer));
}
