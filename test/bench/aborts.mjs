// 10,000 and 60,000 queued mini-program requests sharing one signal, aborted at once: the time
// until every one has settled (issue #16: 10,000 in 50 ms), against the floor of rejecting as
// many bare promises. A host whose request() never answers keeps all but the first 10 queued.
// Run by test/bench/run.mjs in a fresh process; `node --expose-gc test/bench/aborts.mjs`.
import { performance } from 'node:perf_hooks';
import { createCancelToken, createClient as createMiniClient } from 'channel-sdk/miniprogram';

const quick = process.argv.includes('--quick');
const b64 = (v) => Buffer.from(JSON.stringify(v)).toString('base64url');
const issue = () => `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ iat: Math.floor(Date.now() / 1000), exp: Math.floor(Date.now() / 1000) + 900 })}.sig`;
const base = 'http://127.0.0.1:9';
const fmt = (n, digits) => n.toFixed(digits);
const out = [];
function table(title, head, rows, note) {
  out.push(`#### ${title}`, '', `| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`));
  if (note) out.push('', note);
}
// A host whose request() never answers keeps every request but the first 10 in the queue;
// one cancel token (and one AbortSignal) shared by all of them is fired; the figure is the
// time until every request has settled. The floor: rejecting as many bare promises.
{
  const rows = [];
  const warnings = [];
  const onWarning = (w) => warnings.push(w.name);
  process.on('warning', onWarning);
  for (const n of [10_000, 60_000]) {
    const count = Math.round(n * (quick ? 0.2 : 1));
    const jwt = issue();
    const client = createMiniClient({ baseUrl: base, tokenProvider: () => jwt, request: () => ({ abort() {} }) });
    const once = async (kind, size) => {
      const handle = kind === 'createCancelToken' ? createCancelToken() : new AbortController();
      const pending = Array.from({ length: size }, (_, i) => client.get('/q/' + i, { signal: handle.signal }).catch(() => 'aborted'));
      await new Promise((r) => setTimeout(r, 50));
      globalThis.gc?.();
      const t0 = performance.now();
      if (kind === 'createCancelToken') handle.cancel();
      else handle.abort();
      await Promise.all(pending);
      return performance.now() - t0;
    };
    // Warmed up like every other scenario (the first run compiles the abort path), then the
    // median of 3 runs.
    const measure = async (kind) => {
      await once(kind, 2000);
      const runs = [await once(kind, count), await once(kind, count), await once(kind, count)];
      return runs.toSorted((a, b) => a - b)[1];
    };
    const floorOnce = async () => {
      const rejects = [];
      const pending = Array.from({ length: count }, () => new Promise((_, reject) => rejects.push(reject)).catch(() => 'aborted'));
      globalThis.gc?.();
      const t0 = performance.now();
      for (const reject of rejects) reject(new Error('aborted'));
      await Promise.all(pending);
      return performance.now() - t0;
    };
    const floor = async () => {
      await floorOnce();
      const runs = [await floorOnce(), await floorOnce(), await floorOnce()];
      return runs.toSorted((a, b) => a - b)[1];
    };
    rows.push([count.toLocaleString('en'), fmt(await floor(), 1), fmt(await measure('createCancelToken'), 1), fmt(await measure('AbortController'), 1)]);
  }
  process.off('warning', onWarning);
  table(
    'Aborting queued mini-program requests that share one signal (ms until all settled; median of 3 after a warm-up)',
    ['queued requests', 'floor: reject as many promises', 'channel-sdk, createCancelToken', 'channel-sdk, AbortController'],
    rows,
    `process warnings during the runs: ${warnings.length ? warnings.join(', ') : 'none (no MaxListenersExceededWarning)'}`,
  );
}

console.log(out.join('\n'));
