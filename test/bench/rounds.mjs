// What the client benches share to take figures in interleaved rounds: a median, a seeded
// shuffle (the same order on every run), a rotation, a pool of concurrent workers, and alternating rounds of contenders.
import { performance } from 'node:perf_hooks';

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

/**
 * `rounds` rounds over `contenders` (name -> (path) => Promise), each giving every contender one
 * figure: its median sequential latency (contenders interleaved request by request, in a fresh
 * `shuffle`d order each time) and its µs per request at concurrency 64 (contenders one after
 * another, in a rotating order). Returns { seq, conc }: name -> one figure per round, in µs.
 */
export async function alternatingRounds(contenders, { rounds, sequential, concurrent, shuffle }) {
  const names = Object.keys(contenders);
  const seq = Object.fromEntries(names.map((n) => [n, []]));
  const conc = Object.fromEntries(names.map((n) => [n, []]));
  for (let round = 0; round < rounds; round++) {
    const samples = Object.fromEntries(names.map((n) => [n, []]));
    for (let i = 0; i < sequential; i++) {
      for (const name of shuffle(names)) {
        const t0 = performance.now();
        await contenders[name](`/s/${i}`);
        samples[name].push((performance.now() - t0) * 1000);
      }
    }
    for (const name of names) seq[name].push(median(samples[name]));
    for (const name of rotate(names, round)) {
      const t0 = performance.now();
      await pool(concurrent, 64, (i) => contenders[name](`/c/${i}`));
      conc[name].push(((performance.now() - t0) * 1000) / concurrent);
    }
  }
  return { seq, conc };
}
