import type { StoredToken, TokenStore } from '../types.js';

/**
 * Writes to a {@link TokenStore} one call at a time, the newest wish winning: `null` (a
 * logout) supersedes any `set` not started yet and runs after the one under way, so a slow
 * `set` (encrypt-then-write, an async host storage) never lands after the `remove` that
 * should have erased it. A call that takes more than `wait` ms no longer holds the others up;
 * if it lands after a newer call started, the newest wish is written again. A store that
 * throws or hangs never fails a request. Sync stores are called synchronously. `service`: the
 * client's baseUrl, whose record a `remove` forgets.
 */
export function createStoreWriter(store: TokenStore, wait: number, service: string): (value: StoredToken | null) => void {
  let wish: StoredToken | null = null;
  let wishes = 0;
  let started = 0; // the wish the latest call was started for
  let busy = false;

  function pump(): void {
    if (busy || started === wishes) return;
    busy = true;
    const mine = (started = wishes);
    const value = wish;
    let moved = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const next = () => {
      if (moved) return;
      moved = true;
      if (timer !== undefined) clearTimeout(timer);
      busy = false;
      pump();
    };
    const landed = () => {
      // Late, after a newer call started: it may have undone that one.
      if (moved && started !== mine) started = -1;
      if (moved) pump();
      else next();
    };
    let result: unknown;
    try {
      result = value ? store.set(value) : store.remove(service);
    } catch {
      result = undefined;
    }
    if (result && typeof (result as PromiseLike<unknown>).then === 'function') {
      timer = setTimeout(next, wait);
      Promise.resolve(result).then(landed, landed);
    } else landed();
  }

  return (value) => {
    wish = value;
    wishes++;
    pump();
  };
}
