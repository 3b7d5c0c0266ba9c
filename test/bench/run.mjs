// npm run bench: channel-sdk against bare fetch, plain ky, the hand-written ky refresh
// patterns and axios + axios-auth-refresh, in one process against one local node:http
// server; client.fetch against bare fetch, ofetch and axios (test/bench/fetch.mjs). Rounds are interleaved (contender order rotates each round) and medians reported.
// Run with `node --expose-gc` (the npm script does) for the heap figures.
import { createServer } from 'node:http';
import { performance } from 'node:perf_hooks';
import axios from 'axios';
import createAuthRefreshInterceptor from 'axios-auth-refresh';
import { build } from 'esbuild';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createClient } from 'channel-sdk';
import { verifyWebhookSignature } from 'channel-sdk/server';
import { median, pool, rotate, seededShuffle } from './rounds.mjs';

const quick = process.argv.includes('--quick');
const scale = quick ? 0.1 : 1;

// ---------------------------------------------------------------- server
const b64 = (v) => Buffer.from(JSON.stringify(v)).toString('base64url');
const state = { valid: new Map(), strict: false, ttl: 900, hits: 0, unauthorized: 0, issued: 0 };
function issue() {
  const iat = Math.floor(Date.now() / 1000);
  const token = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ sub: 'bench', iat, exp: iat + state.ttl, jti: ++state.issued })}.sig${state.issued}`;
  if (state.strict) state.valid.clear();
  state.valid.set(token, Date.now() + state.ttl * 1000);
  return token;
}
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    state.hits++;
    const auth = req.headers.authorization;
    const token = auth && auth.startsWith('Bearer ') ? auth.slice(7) : '';
    const until = state.valid.get(token);
    if (until === undefined || Date.now() >= until) {
      state.unauthorized++;
      const body = '{"code":401,"message":"invalid or expired token"}';
      res.writeHead(401, { 'content-type': 'application/json', 'content-length': body.length }).end(body);
      return;
    }
    const body = JSON.stringify({ code: 0, data: { path: req.url, body: Buffer.concat(chunks).toString() } });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
  });
});
server.keepAliveTimeout = 60_000;
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${server.address().port}`;

function reset({ strict = false, ttl = 900 } = {}) {
  state.valid.clear();
  Object.assign(state, { strict, ttl, hits: 0, unauthorized: 0 });
}

// A partner token endpoint stand-in: a few ms of latency, counts calls.
const provider = { calls: 0, latency: 5 };
async function fetchToken() {
  provider.calls++;
  await new Promise((r) => setTimeout(r, provider.latency));
  return issue();
}

// ---------------------------------------------------------------- contenders
// channel-sdk carries its own copy of ky (bundled). Every ky-based contender gets a copy of
// its own too: sharing one node_modules/ky, they would warm its code up for each other (plain
// ky measures ~10% faster that way), which no single app gets.
const copies = mkdtempSync(join(tmpdir(), 'bench-ky-'));
async function kyCopy(name) {
  const outfile = join(copies, name + '.mjs');
  await build({
    stdin: { contents: "export { default } from 'ky';", resolveDir: process.cwd() },
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    mainFields: ['module', 'main'],
    target: 'es2022',
    outfile,
    logLevel: 'silent',
  });
  return (await import(pathToFileURL(outfile).href)).default;
}
const kys = { plain: await kyCopy('plain'), retry: await kyCopy('retry'), after: await kyCopy('after') };

// Each: { name, setup() -> { get(path), post(path, json) } } returning the unwrapped data.
const contenders = {
  'bare fetch': () => {
    const token = issue();
    const headers = { authorization: `Bearer ${token}` };
    return {
      get: (p) =>
        fetch(base + p, { headers })
          .then((r) => r.json())
          .then((b) => b.data),
    };
  },
  'plain ky (no auth logic)': () => {
    const token = issue();
    const api = kys.plain.create({ prefix: base, retry: 0, headers: { authorization: `Bearer ${token}` } });
    return {
      get: (p) =>
        api
          .get(p.slice(1))
          .json()
          .then((b) => b.data),
    };
  },
  // ky README FAQ "How do I implement token refresh on 401 responses?"
  'ky hook: retry 401 + beforeRetry (ky README)': async () => {
    let token = await fetchToken();
    const api = kys.retry.create({
      prefix: base,
      retry: { statusCodes: [401] },
      hooks: {
        beforeRequest: [({ request }) => request.headers.set('Authorization', `Bearer ${token}`)],
        beforeRetry: [
          async ({ request }) => {
            token = await fetchToken();
            request.headers.set('Authorization', `Bearer ${token}`);
          },
        ],
      },
    });
    return {
      get: (p) =>
        api
          .get(p.slice(1))
          .json()
          .then((b) => b.data),
      post: (p, json) =>
        api
          .post(p.slice(1), { json })
          .json()
          .then((b) => b.data),
    };
  },
  // ky README afterResponse example: refresh on the first 401 and ky.retry with a new Request.
  'ky hook: afterResponse + ky.retry (ky README)': async () => {
    let token = await fetchToken();
    const ky = kys.after;
    const api = ky.create({
      prefix: base,
      hooks: {
        beforeRequest: [({ request }) => request.headers.set('Authorization', `Bearer ${token}`)],
        afterResponse: [
          async ({ request, response, retryCount }) => {
            if (response.status === 401 && retryCount === 0) {
              token = await fetchToken();
              const headers = new Headers(request.headers);
              headers.set('Authorization', `Bearer ${token}`);
              return ky.retry({ request: new Request(request, { headers }), code: 'TOKEN_REFRESHED' });
            }
          },
        ],
      },
    });
    return {
      get: (p) =>
        api
          .get(p.slice(1))
          .json()
          .then((b) => b.data),
      post: (p, json) =>
        api
          .post(p.slice(1), { json })
          .json()
          .then((b) => b.data),
    };
  },
  'axios + axios-auth-refresh (defaults)': async () => {
    let token = await fetchToken();
    const api = axios.create({ baseURL: base });
    api.interceptors.request.use((config) => {
      config.headers.Authorization = `Bearer ${token}`;
      return config;
    });
    createAuthRefreshInterceptor(api, async (failed) => {
      token = await fetchToken();
      failed.response.config.headers.Authorization = `Bearer ${token}`;
    });
    return {
      get: (p) => api.get(p).then((r) => r.data.data),
      post: (p, json) => api.post(p, json).then((r) => r.data.data),
    };
  },
  'channel-sdk': async () => {
    const client = createClient({ baseUrl: base, tokenProvider: fetchToken });
    await client.getToken();
    return { get: (p) => client.get(p), post: (p, json) => client.post(p, { json }), client };
  },
};

// ---------------------------------------------------------------- helpers
const fmt = (n, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : 'n/a');
const shuffle = seededShuffle(20261122);

const tables = [];
function table(title, head, rows, note) {
  const out = [`#### ${title}`, '', `| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)];
  if (note) out.push('', note);
  tables.push(out.join('\n'));
  console.log('\n' + out.join('\n'));
}

// ---------------------------------------------------------------- A + B: steady state
async function throughput(names, total, concurrency, rounds) {
  reset();
  const clients = {};
  for (const name of names) clients[name] = await contenders[name]();
  // Warm-up: JIT, keep-alive sockets.
  for (const name of names) await pool(500 * scale + 50, concurrency, (i) => clients[name].get(`/warm/${i}`));
  const perRound = Math.round(total / rounds);
  const samples = Object.fromEntries(names.map((n) => [n, []]));
  for (let round = 0; round < rounds; round++) {
    for (const name of rotate(names, round)) {
      const t0 = performance.now();
      await pool(perRound, concurrency, (i) => clients[name].get(`/item/${i}`));
      samples[name].push(((performance.now() - t0) * 1000) / perRound);
    }
  }
  return Object.fromEntries(names.map((n) => [n, median(samples[n])]));
}

const steadyNames = [
  'bare fetch',
  'plain ky (no auth logic)',
  'ky hook: retry 401 + beforeRetry (ky README)',
  'ky hook: afterResponse + ky.retry (ky README)',
  'axios + axios-auth-refresh (defaults)',
  'channel-sdk',
];

// Sequential: contenders interleaved request by request, in a freshly shuffled order each
// time (a fixed rotation would give every contender the same predecessor, and latency depends
// on what ran just before), median latency per contender. Drift then hits all alike.
{
  reset();
  const clients = {};
  for (const name of steadyNames) clients[name] = await contenders[name]();
  for (const name of steadyNames) for (let i = 0; i < 500 * scale + 50; i++) await clients[name].get(`/warm/${i}`);
  const samples = Object.fromEntries(steadyNames.map((n) => [n, []]));
  const total = 20_000 * scale;
  for (let i = 0; i < total; i++) {
    for (const name of shuffle(steadyNames)) {
      const t0 = performance.now();
      await clients[name].get(`/item/${i}`);
      samples[name].push((performance.now() - t0) * 1000);
    }
  }
  const us = Object.fromEntries(steadyNames.map((n) => [n, median(samples[n])]));
  table(
    `${total.toLocaleString('en')} sequential GETs per contender (interleaved request by request; median latency)`,
    ['contender', 'µs / request', '× bare fetch', '× plain ky'],
    steadyNames.map((n) => [n, fmt(us[n]), fmt(us[n] / us['bare fetch'], 2), fmt(us[n] / us['plain ky (no auth logic)'], 2)]),
  );
}

{
  const us = await throughput(steadyNames, 20_000 * scale, 64, 16);
  table(
    '20,000 GETs at concurrency 64 (median of 16 interleaved rounds)',
    ['contender', 'µs / request', 'requests / s', '× bare fetch', '× plain ky'],
    steadyNames.map((n) => [n, fmt(us[n]), fmt(1e6 / us[n], 0), fmt(us[n] / us['bare fetch'], 2), fmt(us[n] / us['plain ky (no auth logic)'], 2)]),
  );
}

// ---------------------------------------------------------------- C: storm on an expired token
async function storm(name, strict) {
  reset({ strict });
  const c = await contenders[name]();
  await c.get('/warm');
  state.valid.clear(); // every token issued so far is now expired
  provider.calls = 0;
  state.hits = 0;
  state.unauthorized = 0;
  const t0 = performance.now();
  const results = await Promise.allSettled(
    Array.from({ length: 1000 }, (_, i) => (i % 2 ? c.post(`/p/${i}`, { i, pad: 'x'.repeat(i % 97) }) : c.get(`/g/${i}`))),
  );
  const wall = performance.now() - t0;
  let failures = 0;
  let intact = 0;
  results.forEach((r, i) => {
    if (r.status === 'rejected') return failures++;
    if (i % 2 && JSON.stringify(JSON.parse(r.value.body)) === JSON.stringify({ i, pad: 'x'.repeat(i % 97) })) intact++;
  });
  return { calls: provider.calls, hits: state.hits, failures, intact, wall, maxAttempts: state.hits / 1000 };
}
const stormNames = [
  'ky hook: retry 401 + beforeRetry (ky README)',
  'ky hook: afterResponse + ky.retry (ky README)',
  'axios + axios-auth-refresh (defaults)',
  'channel-sdk',
];
for (const strict of [false, true]) {
  const rows = [];
  for (const name of stormNames) {
    const r = await storm(name, strict);
    rows.push([name, r.calls, r.hits, r.failures, `${r.intact} / 500`, fmt(r.wall, 0)]);
  }
  table(
    `Storm: 500 GET + 500 POST at once on an expired token${strict ? ', strict rotation (each new token revokes all older)' : ''}`,
    ['contender', 'provider calls', 'server hits', 'failures', 'POST bodies intact', 'wall ms'],
    rows,
  );
}

// ---------------------------------------------------------------- D: steady traffic across expiries
{
  const seconds = quick ? 3 : 10;
  const rows = [];
  for (const name of stormNames) {
    reset({ ttl: 2 });
    provider.calls = 0;
    const c = await contenders[name]();
    state.unauthorized = 0;
    let done = 0;
    let failed = 0;
    const until = Date.now() + seconds * 1000;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (Date.now() < until) {
          await c.get(`/steady/${done}`).then(
            () => done++,
            () => failed++,
          );
          await new Promise((r) => setTimeout(r, 2));
        }
      }),
    );
    rows.push([name, done, state.unauthorized, provider.calls, failed]);
  }
  table(
    `${seconds} s of steady traffic (8 loops) with 2-second tokens`,
    ['contender', 'requests ok', '401s seen by server', 'provider calls', 'failures'],
    rows,
  );
}

// ---------------------------------------------------------------- E: heap
if (global.gc) {
  reset();
  const rows = [];
  for (const name of ['plain ky (no auth logic)', 'channel-sdk']) {
    const c = await contenders[name]();
    const heapAfter = async (n) => {
      await pool(n, 64, (i) => c.get(`/heap/${i}`));
      for (let i = 0; i < 3; i++) {
        global.gc();
        await new Promise((r) => setTimeout(r, 20));
      }
      return process.memoryUsage().heapUsed / 1024 / 1024;
    };
    const small = await heapAfter(1000);
    const large = await heapAfter(100_000 * scale);
    rows.push([name, fmt(small, 1), fmt(large, 1), fmt(large - small, 2)]);
  }
  table(
    `Heap after 1k and after ${quick ? '10k' : '100k'} more requests (MiB, after GC)`,
    ['contender', 'after 1k', `after +${quick ? '10k' : '100k'}`, 'growth'],
    rows,
  );
} else {
  console.log('\n(heap figures skipped: run with node --expose-gc)');
}

// ---------------------------------------------------------------- F: webhook verification
{
  const body = Buffer.alloc(10 * 1024, '{"event":"logistics.updated","desc":"快件已发出"}');
  const secret = 'test_secret_123';
  const hex = createHmac('sha256', secret).update(body).digest('hex');
  const raw = async () => timingSafeEqual(createHmac('sha256', secret).update(body).digest(), Buffer.from(hex, 'hex'));
  const sdk = () => verifyWebhookSignature(body, hex, secret);
  const impls = { 'raw node:crypto createHmac + timingSafeEqual': raw, 'channel-sdk/server verifyWebhookSignature': sdk };
  const samples = Object.fromEntries(Object.keys(impls).map((k) => [k, []]));
  for (const fn of Object.values(impls)) for (let i = 0; i < 2000; i++) await fn();
  for (let round = 0; round < 9; round++) {
    for (const name of rotate(Object.keys(impls), round)) {
      let n = 0;
      const t0 = performance.now();
      while (performance.now() - t0 < (quick ? 100 : 400)) {
        if (!(await impls[name]())) throw new Error('verification failed');
        n++;
      }
      samples[name].push(n / ((performance.now() - t0) / 1000));
    }
  }
  const rawOps = median(samples['raw node:crypto createHmac + timingSafeEqual']);
  table(
    'Webhook verification, 10 KB body (median of 9 interleaved rounds)',
    ['implementation', 'verifications / s', '× raw node:crypto'],
    Object.keys(impls).map((k) => [k, fmt(median(samples[k]), 0), fmt(median(samples[k]) / rawOps, 2)]),
  );
}

// ---------------------------------------------------------------- G: aborting queued mini-program requests
// In a process of its own (test/bench/aborts.mjs): the scenario is the young generation's
// work, and this process holds ~200 MiB of samples by now, which no mini-program has.
{
  const { execFileSync } = await import('node:child_process');
  const out = execFileSync(process.execPath, ['--expose-gc', new URL('./aborts.mjs', import.meta.url).pathname, ...(quick ? ['--quick'] : [])], {
    encoding: 'utf8',
  });
  tables.push(out.trim());
  console.log('\n' + out.trim());
}

// ---------------------------------------------------------------- I: client.fetch (issue #32)
// In a process of its own (test/bench/fetch.mjs): client.fetch against bare fetch, ofetch and axios,
// and those libraries over client.fetch, in alternating rounds with each round's ratio.
{
  const { execFileSync } = await import('node:child_process');
  const out = execFileSync(process.execPath, [new URL('./fetch.mjs', import.meta.url).pathname, ...(quick ? ['--quick'] : [])], { encoding: 'utf8' });
  tables.push(out.trim());
  console.log('\n' + out.trim());
}

// ---------------------------------------------------------------- J: telemetry off, no-op, SDK (issue #34)
// In a process of its own (test/bench/telemetry.mjs): it registers a global context manager.
{
  const { execFileSync } = await import('node:child_process');
  const out = execFileSync(process.execPath, [new URL('./telemetry.mjs', import.meta.url).pathname, ...(quick ? ['--quick'] : [])], { encoding: 'utf8' });
  tables.push(out.trim());
  console.log('\n' + out.trim());
}

// ---------------------------------------------------------------- H: the webhook inbox (issue #33)
// In processes of its own (test/bench/inbox.mjs): receivers, a redis-server and workers it kills.
{
  const { execFileSync } = await import('node:child_process');
  const { existsSync } = await import('node:fs');
  const { redisServerPath } = await import('../helpers/redis-server.mjs');
  if (existsSync(redisServerPath)) {
    const out = execFileSync(process.execPath, [new URL('./inbox.mjs', import.meta.url).pathname, ...(quick ? ['--quick'] : [])], { encoding: 'utf8' });
    tables.push(out.trim());
    console.log('\n' + out.trim());
  } else console.log(`\n(webhook inbox figures skipped: no redis-server at ${redisServerPath})`);
}

console.log(
  `\nNode ${process.version}, ${(await import('node:os')).cpus().length} cores, ky ${JSON.parse((await import('node:fs')).readFileSync(new URL('../../node_modules/ky/package.json', import.meta.url), 'utf8')).version}`,
);
server.closeAllConnections();
server.close();
