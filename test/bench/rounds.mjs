// What the client benches share to take figures in interleaved rounds: a median, a seeded
// shuffle (the same order on every run), a rotation, and a pool of concurrent workers.

export const median = (xs) => {
  const s = xs.toSorted((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** A shuffle with its own seeded generator: each bench gets the same orders on every run. */
export function seededShuffle(seed) {
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  return (xs) => {
    const out = [...xs];
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [out[i], out[j]] = [out[j], out[i]];
    }
    return out;
  };
}

export const rotate = (xs, k) => xs.slice(k % xs.length).concat(xs.slice(0, k % xs.length));

/** Runs fn(0..total-1) on `concurrency` workers. */
export async function pool(total, concurrency, fn) {
  let next = 0;
  const workers = Array.from({ length: Math.min(concurrency, total) }, async () => {
    while (next < total) await fn(next++);
  });
  await Promise.all(workers);
}
