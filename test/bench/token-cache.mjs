// node test/bench/token-cache.mjs (after `npm run build`): the token exchange's cache, measured.
//   1. Several instances: 4 processes x 20 users x 200 concurrent getToken, 100 ms service latency,
//      one redis-server: token-endpoint calls with createRedisTokenCache, and with a get/set-only
//      Redis cache (what users wrote from the option table before the lock existed).
//   2. Redis stopped, or frozen, mid-run: the slowest getToken against `timeout`.
//   3. 60-second tokens: errors and cache hits, in memory and on Redis.
//   4. Cache hit ns for one busy user at 10 / 1,000 / 10,000 users cached, against lru-cache and a
//      plain Map (and the cache this replaced); eviction ns per insert at 10,000 and 100,000.
// One run; contenders interleaved (order rotates each round); medians. Prints markdown tables.
// --quick: smaller, for a smoke run.
import { createServer } from 'node:http';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { existsSync } from 'node:fs';
import { LRUCache } from 'lru-cache';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { createMemoryTokenCache, createRedisTokenCache, createTokenExchange } from 'channel-sdk/server';
import { redisServerPath, startRedis } from '../helpers/redis-server.mjs';
import { startInstances } from '../server/redis/instances.mjs';

const quick = process.argv.includes('--quick');
const hasRedis = existsSync(redisServerPath);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (values) => values.toSorted((a, b) => a - b)[Math.floor(values.length / 2)];
const fmt = (n, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const table = (head, rows) => console.log(['| ' + head.join(' | ') + ' |', '|' + head.map(() => '---').join('|') + '|', ...rows.map((r) => '| ' + r.join(' | ') + ' |')].join('\n') + '\n');

// ---------------------------------------------------------------- a token endpoint that counts
const b64 = (v) => Buffer.from(JSON.stringify(v)).toString('base64url');
const endpoint = { calls: 0, latencyMs: 100, expiresIn: 900 };
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const n = ++endpoint.calls;
    setTimeout(() => {
      const iat = Math.floor(Date.now() / 1000);
      const token = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ iat, exp: iat + endpoint.expiresIn, n })}.${b64('sig' + n)}`;
      const body = JSON.stringify({ code: 0, data: { access_token: token, expires_in: endpoint.expiresIn, token_type: 'Bearer' } });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    }, endpoint.latencyMs);
  });
});
server.keepAliveTimeout = 60_000;
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const baseUrl = `http://127.0.0.1:${server.address().port}`;
const credentials = { accessKey: 'ak_bench', secretKey: 'sk_bench' };

async function connectIoredis(url) {
  const client = new Redis(url);
  client.on('error', () => {});
  await new Promise((resolve) => client.once('ready', resolve));
  return { client, close: async () => client.disconnect() };
}
async function connectNodeRedis(url) {
  const client = createClient({ url });
  client.on('error', () => {});
  await client.connect();
  return { client, close: async () => client.destroy() };
}
const clients = [
  ['ioredis 6', 'ioredis', connectIoredis],
  ['node-redis 6', 'redis', connectNodeRedis],
];

console.log(`# Token cache bench (Node ${process.version}${quick ? ', --quick' : ''})\n`);

// ---------------------------------------------------------------- 1. several instances
if (hasRedis) {
  const processes = 4;
  const users = Array.from({ length: 20 }, (_, i) => `user-${i}`);
  const concurrency = quick ? 50 : 200;
  endpoint.latencyMs = 100;
  endpoint.expiresIn = 900;
  const redis = await startRedis();
  const rows = [];
  let run = 0;
  for (const [label, client] of clients) {
    for (const lock of [true, false]) {
      const instances = await startInstances(processes, { client, redisUrl: redis.url, baseUrl, ...credentials, lock, prefix: `bench${++run}:` });
      const before = endpoint.calls;
      const started = performance.now();
      const results = await instances.run(users, concurrency);
      const wall = performance.now() - started;
      await instances.close();
      const errors = results.reduce((n, r) => n + r.errors.length, 0);
      const tokensPerUser = Math.max(...users.map((u) => new Set(results.flatMap((r) => r.distinct[u] ?? [])).size));
      rows.push([label, lock ? 'createRedisTokenCache (lock)' : 'get/set only, no lock', fmt(endpoint.calls - before), fmt(tokensPerUser), fmt(errors), fmt(wall)]);
    }
  }
  await redis.stop();
  console.log(`## ${processes} processes x ${users.length} users x ${concurrency} concurrent getToken, ${endpoint.latencyMs} ms token endpoint\n`);
  console.log(`Target: <= ${users.length} token-endpoint calls (one per user).\n`);
  table(['client', 'cache', 'token-endpoint calls', 'distinct tokens per user (max)', 'errors', 'wall ms'], rows);
} else {
  console.log(`(Redis sections skipped: no redis-server at ${redisServerPath})\n`);
}

// ---------------------------------------------------------------- 2. Redis stopped / frozen mid-run
if (hasRedis) {
  endpoint.latencyMs = 5;
  endpoint.expiresIn = 900;
  const timeout = 1000;
  const runMs = quick ? 1500 : 3000;
  const rows = [];
  for (const [label, , connect] of clients) {
    for (const failure of ['stopped (SIGTERM)', 'frozen (SIGSTOP)']) {
      const redis = await startRedis();
      const { client, close } = await connect(redis.url);
      const reports = [];
      const exchange = createTokenExchange({ baseUrl, ...credentials, timeout, cache: createRedisTokenCache(client), onCacheError: (e) => reports.push(e) });
      const latencies = { before: [], after: [] };
      let errors = 0;
      let phase = 'before';
      const pending = [];
      const started = performance.now();
      const before = endpoint.calls;
      let n = 0;
      // This machine is shared: the event loop's own delay says how much of a slow call is not ours.
      const loopDelay = monitorEventLoopDelay({ resolution: 5 });
      loopDelay.enable();
      while (performance.now() - started < runMs) {
        if (phase === 'before' && performance.now() - started > runMs / 3) {
          phase = 'after';
          if (failure.startsWith('stopped')) void redis.stop();
          else redis.pause();
        }
        const bucket = latencies[phase];
        for (let i = 0; i < 2; i++) {
          const t0 = performance.now();
          // 100 users, one call in ten forced: hits, misses, locks and stores all happen.
          pending.push(exchange.getToken('user-' + (n++ % 100), { forceRefresh: n % 10 === 0 }).then(() => bucket.push(performance.now() - t0), () => errors++));
        }
        await sleep(10);
      }
      await Promise.all(pending);
      loopDelay.disable();
      redis.resume();
      await close();
      await redis.stop();
      const max = (list) => (list.length ? Math.max(...list) : 0);
      rows.push([
        label,
        failure,
        fmt(timeout),
        fmt(max(latencies.before)),
        fmt(max(latencies.after)),
        fmt(max(latencies.after) / timeout, 2),
        fmt(loopDelay.max / 1e6),
        fmt(median(latencies.after), 1),
        fmt(latencies.before.length + latencies.after.length),
        fmt(errors),
        fmt(endpoint.calls - before),
        fmt(reports.length),
      ]);
    }
  }
  console.log(`## Redis stopped or frozen mid-run (timeout ${timeout} ms, token endpoint ${endpoint.latencyMs} ms)\n`);
  console.log(`Target: every getToken answers within timeout + 100 ms, through the service.\n`);
  table(['client', 'Redis', 'timeout ms', 'max ms before', 'max ms after', 'max after / timeout', 'event-loop delay max ms', 'median ms after', 'getToken calls', 'errors', 'token-endpoint calls', 'cache errors reported'], rows);
}

// ---------------------------------------------------------------- 3. 60-second tokens
{
  endpoint.latencyMs = 5;
  endpoint.expiresIn = 60;
  const users = Array.from({ length: 20 }, (_, i) => `short-${i}`);
  const rounds = 10;
  const rows = [];
  const caches = [['in memory (default)', async () => ({ cache: undefined, close: async () => {} })]];
  let redis;
  if (hasRedis) {
    redis = await startRedis();
    for (const [label, , connect] of clients) {
      caches.push([`Redis, ${label}`, async () => {
        const { client, close } = await connect(redis.url);
        return { cache: createRedisTokenCache(client, { prefix: label + ':' }), close };
      }]);
    }
  }
  for (const [label, make] of caches) {
    const { cache, close } = await make();
    const reports = [];
    const exchange = createTokenExchange({ baseUrl, ...credentials, cacheMargin: 60, onCacheError: (e) => reports.push(e), ...(cache ? { cache } : {}) });
    const before = endpoint.calls;
    let errors = 0;
    let calls = 0;
    for (let round = 0; round < rounds; round++) {
      await Promise.all(users.map((u) => exchange.getToken(u).catch(() => errors++)));
      calls += users.length;
      await sleep(20);
    }
    const service = endpoint.calls - before;
    await close();
    rows.push([label, fmt(calls), fmt(service), fmt(calls - service), fmt(errors), fmt(reports.length)]);
  }
  await redis?.stop();
  console.log(`## 60-second tokens (cacheMargin 60 s): ${users.length} users x ${rounds} rounds\n`);
  console.log('Target: 0 errors, and cache hits after the first call.\n');
  table(['cache', 'getToken calls', 'token-endpoint calls', 'cache hits', 'errors', 'cache errors reported'], rows);
}

// ---------------------------------------------------------------- 4. in-memory cache: hits and evictions
/** The in-memory cache this release replaced: a hit deleted and re-inserted its Map entry. */
function previousMemoryCache(maxEntries) {
  const entries = new Map();
  return {
    get(key) {
      const entry = entries.get(key);
      if (!entry) return undefined;
      entries.delete(key);
      if (Date.now() >= entry.until) return undefined;
      entries.set(key, entry);
      return entry.value;
    },
    set(key, value, ttlMs) {
      entries.delete(key);
      entries.set(key, { value, until: Date.now() + ttlMs });
      while (entries.size > maxEntries) entries.delete(entries.keys().next().value);
    },
  };
}
const lru = (max) => {
  const cache = new LRUCache({ max });
  return { get: (k) => cache.get(k), set: (k, v, ttl) => cache.set(k, v, { ttl }) };
};
const plainMap = () => {
  const map = new Map();
  return { get: (k) => map.get(k), set: (k, v) => map.set(k, v) };
};
const contenders = {
  'channel-sdk createMemoryTokenCache': (max) => createMemoryTokenCache(max),
  'lru-cache 11 (ttl per entry)': lru,
  'plain Map.get (floor, no LRU, no expiry)': plainMap,
  'previous cache (Map delete + re-insert)': previousMemoryCache,
};
const token = { accessToken: 'x.y.z', expiresIn: 900, tokenType: 'Bearer', expiresAt: Date.now() + 900_000 };
const rotate = (list, by) => list.map((_, i) => list[(i + by) % list.length]);
let sink = 0;

/** Runs `step` in batches until `ms` have passed; ns per step. */
function timed(step, ms, batch = 1000) {
  let count = 0;
  const started = performance.now();
  let elapsed = 0;
  while (elapsed < ms) {
    for (let i = 0; i < batch; i++) step(count++);
    elapsed = performance.now() - started;
  }
  return (elapsed * 1e6) / count;
}

{
  const fills = [10, 1_000, 10_000];
  const rounds = quick ? 3 : 7;
  const names = Object.keys(contenders);
  const rows = [];
  for (const fill of fills) {
    // One instance per contender for the whole run, so a cache that slows with hits shows it.
    const caches = Object.fromEntries(names.map((name) => [name, contenders[name](10_000)]));
    for (const name of names) for (let i = 0; i < fill; i++) caches[name].set('user-' + i, token, 900_000);
    const busy = 'user-' + Math.floor(fill / 2);
    const samples = Object.fromEntries(names.map((name) => [name, []]));
    for (let round = 0; round < rounds; round++) {
      for (const name of rotate(names, round)) {
        const cache = caches[name];
        samples[name].push(timed(() => (sink ^= cache.get(busy) === token ? 1 : 0), quick ? 40 : 120));
      }
    }
    const lruNs = median(samples['lru-cache 11 (ttl per entry)']);
    for (const name of names) {
      const ns = median(samples[name]);
      rows.push([fmt(fill), name, fmt(ns, 0), fmt(samples[name].at(-1), 0), fmt(ns / lruNs, 2)]);
    }
  }
  // The whole exchange on a hit, for scale (an async call: microtasks included).
  const exchange = createTokenExchange({ baseUrl, ...credentials });
  endpoint.expiresIn = 900;
  await exchange.getToken('busy');
  const hitSamples = [];
  for (let round = -1; round < rounds; round++) { // round -1 warms up
    const count = quick ? 20_000 : 100_000;
    const started = performance.now();
    for (let i = 0; i < count; i++) await exchange.getToken('busy');
    if (round >= 0) hitSamples.push(((performance.now() - started) * 1e6) / count);
  }
  console.log(`## In-memory cache: hit ns for one busy user (median of ${rounds} interleaved rounds; the same cache throughout)\n`);
  console.log('Target: <= 5x lru-cache at every fill.\n');
  table(['users cached', 'cache', 'ns per hit (median)', 'ns per hit (last round)', 'x lru-cache'], rows);
  console.log(`The whole \`exchange.getToken\` on a hit (default cache, awaited one by one): ${fmt(median(hitSamples))} ns.\n`);
}

{
  const sizes = [10_000, 100_000];
  const rounds = quick ? 3 : 5;
  const names = Object.keys(contenders).filter((n) => !n.startsWith('plain Map'));
  const rows = [];
  for (const size of sizes) {
    const caches = Object.fromEntries(names.map((name) => [name, contenders[name](size)]));
    for (const name of names) for (let i = 0; i < size; i++) caches[name].set('seed-' + i, token, 900_000);
    const samples = Object.fromEntries(names.map((name) => [name, []]));
    const next = Object.fromEntries(names.map((name) => [name, 0]));
    for (let round = 0; round < rounds; round++) {
      for (const name of rotate(names, round)) {
        const cache = caches[name];
        // Every insert is a new user, so every insert evicts the least recently used one.
        samples[name].push(timed(() => cache.set('new-' + next[name]++, token, 900_000), quick ? 40 : 150, 100));
      }
    }
    const lruNs = median(samples['lru-cache 11 (ttl per entry)']);
    for (const name of names) rows.push([fmt(size), name, fmt(median(samples[name]), 0), fmt(median(samples[name]) / lruNs, 2)]);
  }
  console.log(`## In-memory cache: ns per insert when full (each insert evicts one; median of ${rounds} interleaved rounds)\n`);
  table(['max entries', 'cache', 'ns per insert', 'x lru-cache'], rows);
}

if (sink === 42) console.log('');
server.closeAllConnections();
server.close();
