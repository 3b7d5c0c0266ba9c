/**
 * Nonces seen by the token endpoint: a Map for O(1) lookup and a queue in arrival order for
 * O(1) amortised expiry, so the check costs the same after 50,000 tokens as after one.
 */
export function createNonceStore(keepSeconds: number) {
  const until = new Map<string, number>();
  const queue: Array<{ nonce: string; until: number } | undefined> = [];
  let head = 0;

  function evict(nowSeconds: number): void {
    while (head < queue.length && (queue[head] as { until: number }).until <= nowSeconds) {
      const entry = queue[head] as { nonce: string; until: number };
      queue[head++] = undefined;
      if (until.get(entry.nonce) === entry.until) until.delete(entry.nonce);
    }
    if (head > 1024 && head * 2 > queue.length) {
      queue.splice(0, head);
      head = 0;
    }
  }

  return {
    /** Remembers `nonce` and answers true, or answers false when it was seen within the window. */
    add(nonce: string, nowSeconds: number): boolean {
      evict(nowSeconds);
      // A clock that moves back (a test's `now`) can leave older entries queued: the value decides.
      const seen = until.get(nonce);
      if (seen !== undefined && seen > nowSeconds) return false;
      const entry = { nonce, until: nowSeconds + keepSeconds };
      until.set(nonce, entry.until);
      queue.push(entry);
      return true;
    },
    get size(): number {
      return until.size;
    },
  };
}
