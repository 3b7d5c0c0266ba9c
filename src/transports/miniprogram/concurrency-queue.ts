// Mini-program code, as host-transport.ts: ES2015 built-ins only, no fetch, TextDecoder or URL.

/** Runs at most `concurrency` tasks at once; the rest wait in arrival order. */
export function limiter(concurrency: number) {
  let active = 0;
  // Waiting tasks in arrival order. An aborted one stays in place, settled, and is skipped
  // when its turn comes: removal is O(1) however long the queue.
  let queue: Array<() => void> = [];
  let head = 0;
  let draining = false;

  // Freed slots are refilled a microtask later: when one signal cancels thousands of requests
  // at once, the queued ones are all settled by then and skipped, none started only to be
  // aborted.
  const drain = () => {
    draining = false;
    while (head < queue.length) {
      if (active >= concurrency) break; // start() takes a slot
      queue[head++]();
    }
    if (head === queue.length) {
      queue = [];
      head = 0;
    }
  };
  return {
    enter(start: () => void): void {
      if (active < concurrency) start();
      else queue.push(start);
    },
    take: () => void active++,
    release(): void {
      active--;
      if (!draining) {
        draining = true;
        Promise.resolve().then(drain);
      }
    },
  };
}
