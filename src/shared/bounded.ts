/**
 * Runs a call (a store's, a user's), refusing to wait for it longer than `ms`: a synchronous
 * answer or throw settles at once, a promise is raced against a timer that rejects with `late()`.
 */
export function bounded<T>(call: () => T | PromiseLike<T>, ms: number, late: () => unknown): Promise<T> {
  let result: T | PromiseLike<T>;
  try {
    result = call();
  } catch (error) {
    return Promise.reject(error);
  }
  if (typeof (result as PromiseLike<T> | null)?.then !== 'function') return Promise.resolve(result as T);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(late()), ms);
  });
  return Promise.race([Promise.resolve(result), timeout]).finally(() => clearTimeout(timer));
}
