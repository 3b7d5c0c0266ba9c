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
 * `shuffle`d order each time) and its µs per request at concurrency 64: the round's `concurrent`
 * requests per contender in batches of 250 (`chunks` of them), contenders alternating batch by
 * batch in a fresh shuffled order, the median batch taken (one contender's whole batch after
 * another's let the machine's drift between them decide: on 2 cores the floor alone moved
 * 0.85-1.36x bare fetch from round to round). Returns { seq, conc, batches }: name -> one figure
 * per round, in µs; `batches` keeps every batch (name -> round -> batch) for pairedRatio().
 */
export async function alternatingRounds(contenders, { rounds, sequential, concurrent, shuffle, chunks = Math.max(8, Math.round(concurrent / 250)) }) {
  const names = Object.keys(contenders);
  const seq = Object.fromEntries(names.map((n) => [n, []]));
  const conc = Object.fromEntries(names.map((n) => [n, []]));
  const batches = Object.fromEntries(names.map((n) => [n, []]));
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
    const batch = Math.ceil(concurrent / chunks);
    const these = Object.fromEntries(names.map((n) => [n, []]));
    for (let c = 0; c < chunks; c++) {
      for (const name of shuffle(names)) {
        const t0 = performance.now();
        await pool(batch, 64, (i) => contenders[name](`/c/${c * batch + i}`));
        these[name].push(((performance.now() - t0) * 1000) / batch);
      }
    }
    for (const name of names) {
      conc[name].push(median(these[name]));
      batches[name].push(these[name]);
    }
  }
  return { seq, conc, batches };
}

/**
 * Per round, the median over its batches of `name`'s batch against `to`'s batch of the same turn
 * (run next to each other): the machine's drift across a round moves both alike, where a ratio of
 * the two contenders' median batches compared batches minutes apart.
 */
export const pairedRatio = (batches, name, to) => batches[name].map((round, r) => median(round.map((us, c) => us / batches[to][r][c])));

/**
 * The floor client.fetch is judged against beside bare fetch: what any fetch that can be aborted
 * and timed out pays in Node (its signal, which undici listens on per request, and a timer).
 * bench:fetch and bench:fetch:processes both use it, so that their floors stay the same.
 */
export function fetchWithSignalAndTimer(url, headers) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 10_000);
  return fetch(url, { headers, signal: controller.signal }).finally(() => clearTimeout(timer));
}
