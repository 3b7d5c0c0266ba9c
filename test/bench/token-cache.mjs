// node test/bench/token-cache.mjs (after `npm run build`): the token exchange's cache, measured.
//   1. Several instances: 4 processes x 20 users x 200 concurrent getToken, 100 ms service latency,
//      one redis-server: token-endpoint calls with createRedisTokenCache, and with a get/set-only
//      Redis cache (what users wrote from the option table before the lock existed).
//   2. Redis frozen (SIGSTOP), stopped (SIGTERM) or unreachable from the start, with default
//      options: what a new user, a cached user and a forced refresh each pay, over every client.
//   2b. 300 forced refreshes by one user through the token route: token-endpoint calls, on one
//      process and on 4 processes sharing Redis.
//   3. 60-second tokens: errors and cache hits, in memory and on Redis.
//   4. Cache hit ns for one busy user at 10 / 1,000 / 10,000 users cached, against lru-cache and a
//      plain Map (and the cache this replaced); eviction ns per insert at 10,000 and 100,000.
// One run; contenders interleaved (order rotates each round); medians. Prints markdown tables.
// --quick: smaller, for a smoke run. --only=faults,forced: those sections only (names: instances,
// faults, forced, short, memory).
import { createServer } from 'node:http';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { existsSync } from 'node:fs';
import { LRUCache } from 'lru-cache';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { Redis as Redis5 } from 'ioredis-v5';
import { createClient as createClient5 } from 'redis-v5';
import { createClient as createClient4 } from 'redis-v4';
import { createMemoryTokenCache, createRedisTokenCache, createTokenExchange, createTokenRoute, toNodeHandler } from 'channel-sdk/server';
import { redisServerPath, startRedis } from '../helpers/redis-server.mjs';
import { startInstances } from '../server/redis/instances.mjs';
import { benchTelemetry } from './telemetry-setup.mjs';

const quick = process.argv.includes('--quick');
const only = process.argv
  .find((a) => a.startsWith('--only='))
  ?.slice(7)
  .split(',');
const section = (name) => !only || only.includes(name);
const hasRedis = existsSync(redisServerPath);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (values) => values.toSorted((a, b) => a - b)[Math.floor(values.length / 2)];
const fmt = (n, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const table = (head, rows) =>
  console.log(['| ' + head.join(' | ') + ' |', '|' + head.map(() => '---').join('|') + '|', ...rows.map((r) => '| ' + r.join(' | ') + ' |')].join('\n') + '\n');

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

// { wait: false }: do not wait for the connection (a Redis that is not there).
const connectIoredis =
  (RedisClass) =>
  async (url, { wait = true } = {}) => {
    const client = new RedisClass(url);
    client.on('error', () => {});
    if (wait) await new Promise((resolve) => client.once('ready', resolve));
    return { client, close: async () => client.disconnect() };
  };
const connectNodeRedis = (create) => async (url) => {
  const client = create({ url });
  client.on('error', () => {});
  await client.connect();
  return { client, close: async () => (typeof client.destroy === 'function' ? client.destroy() : client.disconnect()) };
};
const clients = [
  ['ioredis 6', 'ioredis', connectIoredis(Redis)],
  ['node-redis 6', 'redis', connectNodeRedis(createClient)],
];
const allClients = [
  clients[0],
  ['ioredis 5', 'ioredis-v5', connectIoredis(Redis5)],
  clients[1],
  ['node-redis 5', 'redis-v5', connectNodeRedis(createClient5)],
  ['node-redis 4', 'redis-v4', connectNodeRedis(createClient4)],
];

console.log(`# Token cache bench (Node ${process.version}${quick ? ', --quick' : ''})\n`);

// ---------------------------------------------------------------- 1. several instances
if (hasRedis && section('instances')) {
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
      rows.push([
        label,
        lock ? 'createRedisTokenCache (lock)' : 'get/set only, no lock',
        fmt(endpoint.calls - before),
        fmt(tokensPerUser),
        fmt(errors),
        fmt(wall),
      ]);
    }
  }
  await redis.stop();
  console.log(`## ${processes} processes x ${users.length} users x ${concurrency} concurrent getToken, ${endpoint.latencyMs} ms token endpoint\n`);
  console.log(`Target: <= ${users.length} token-endpoint calls (one per user).\n`);
  table(['client', 'cache', 'token-endpoint calls', 'distinct tokens per user (max)', 'errors', 'wall ms'], rows);
}
if (!hasRedis) console.log(`(Redis sections skipped: no redis-server at ${redisServerPath})\n`);

// ---------------------------------------------------------------- 2. Redis frozen, stopped or unreachable
// Default options, as a user runs them: the figure is what each kind of getToken pays.
if (hasRedis && section('faults')) {
  endpoint.latencyMs = 20;
  endpoint.expiresIn = 900;
  const ticks = quick ? 10 : 20;
  const kinds = ['new user', 'cached user', 'forced refresh'];
  const cases = (quick ? allClients.slice(0, 1).concat(allClients.slice(2, 3)) : allClients).flatMap((client) => [
    [client, 'frozen (SIGSTOP)'],
    [client, 'stopped (SIGTERM)'],
    ...(client[0].startsWith('ioredis') ? [[client, 'unreachable from the start']] : []),
  ]);
  const rows = [];
  for (const [[label, , connect], failure] of cases) {
    const redis = await startRedis();
    const unreachable = failure.startsWith('unreachable');
    if (unreachable) await redis.stop(); // the client is created against a port nobody listens on
    const { client, close } = await connect(redis.url, { wait: !unreachable });
    const reports = [];
    const exchange = createTokenExchange({ baseUrl, ...credentials, cache: createRedisTokenCache(client), onCacheError: (e) => reports.push(e) });
    const warm = Array.from({ length: ticks }, (_, i) => `warm-${i}`);
    const before = Object.fromEntries(kinds.map((k) => [k, []]));
    const after = Object.fromEntries(kinds.map((k) => [k, []]));
    const clocked = async (list, call) => {
      const t0 = performance.now();
      await call();
      list.push(performance.now() - t0);
    };
    let errors = 0;
    // Before the failure: the same three kinds of call, for reference.
    for (const user of warm) await clocked(before['new user'], () => exchange.getToken(user));
    await sleep(100); // the stores land
    for (const user of warm) await clocked(before['cached user'], () => exchange.getToken(user));
    for (const user of warm.slice(0, 5)) await clocked(before['forced refresh'], () => exchange.getToken(user, { forceRefresh: true }));
    await sleep(100);
    if (failure.startsWith('frozen')) redis.pause();
    if (failure.startsWith('stopped')) await redis.stop();
    const loopDelay = monitorEventLoopDelay({ resolution: 5 });
    loopDelay.enable();
    const pending = [];
    const calls = endpoint.calls;
    for (let i = 0; i < ticks; i++) {
      const record = (kind, call) => pending.push(clocked(after[kind], call).catch(() => errors++));
      record('new user', () => exchange.getToken(`new-${i}`));
      record('cached user', () => exchange.getToken(warm[i]));
      record('forced refresh', () => exchange.getToken(warm[(i + 7) % warm.length], { forceRefresh: true }));
      await sleep(100);
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
      ...kinds.map((k) => fmt(max(before[k]))),
      ...kinds.map((k) => fmt(max(after[k]))),
      fmt(Math.max(...kinds.map((k) => max(after[k]) - max(before[k])))),
      fmt(loopDelay.max / 1e6),
      fmt(ticks * kinds.length),
      fmt(errors),
      fmt(endpoint.calls - calls),
      fmt(reports.length),
    ]);
  }
  console.log(`## Redis frozen, stopped or unreachable: each kind of getToken, default options (token endpoint ${endpoint.latencyMs} ms)\n`);
  console.log(
    `${ticks} ticks 100 ms apart, each one call per kind (a user not seen before, a user cached before the failure, a forced refresh). Target: a failing Redis adds < 300 ms to any getToken, 0 errors.\n`,
  );
  table(
    [
      'client',
      'Redis',
      ...kinds.map((k) => `${k}: max ms before`),
      ...kinds.map((k) => `${k}: max ms after`),
      'most added ms',
      'event-loop delay max ms',
      'getToken calls after',
      'errors',
      'token-endpoint calls after',
      'cache errors reported',
    ],
    rows,
  );
}

// ---------------------------------------------------------------- 2b. forced refreshes by one user
// The token route over HTTP, as a front end reaches it: 300 `?force=1` GETs by one signed-in user.
if (section('forced')) {
  endpoint.latencyMs = 20;
  endpoint.expiresIn = 900;
  const total = 300;
  const rows = [];
  /** `total` GETs spread over `urls` in turn, `concurrency` at a time: statuses and tokens. */
  async function hammer(urls, concurrency) {
    const tokens = new Set();
    let failed = 0;
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < total) {
          const url = urls[next++ % urls.length];
          const response = await fetch(url + '/channel-token?force=1', { headers: { 'x-user': 'heavy-user' } });
          const body = await response.json();
          if (response.status === 200 && body.access_token) tokens.add(body.access_token);
          else failed++;
        }
      }),
    );
    return { tokens: tokens.size, failed, wall: performance.now() - started };
  }
  const patterns = [
    ['all 300 at once', total],
    ['10 at a time', 10],
    ['one at a time', 1],
  ];
  for (const [pattern, concurrency] of patterns) {
    const exchange = createTokenExchange({ baseUrl, ...credentials });
    const route = createServer(toNodeHandler(createTokenRoute({ exchange, resolveUser: (req) => req.headers['x-user'], onError: () => {} })));
    await new Promise((resolve) => route.listen(0, '127.0.0.1', resolve));
    const before = endpoint.calls;
    const result = await hammer([`http://127.0.0.1:${route.address().port}`], concurrency);
    route.closeAllConnections();
    route.close();
    rows.push(['1 process, in-memory cache', pattern, fmt(total), fmt(endpoint.calls - before), fmt(result.tokens), fmt(result.failed), fmt(result.wall)]);
  }
  if (hasRedis) {
    const redis = await startRedis();
    let run = 0;
    for (const [label, client] of clients) {
      for (const [pattern, concurrency] of patterns.slice(1)) {
        const instances = await startInstances(4, { client, redisUrl: redis.url, baseUrl, ...credentials, route: true, prefix: `forced${++run}:` });
        const before = endpoint.calls;
        const result = await hammer(
          instances.ports.map((port) => `http://127.0.0.1:${port}`),
          concurrency,
        );
        await instances.close();
        rows.push([
          `4 processes, Redis (${label})`,
          pattern + ', round robin',
          fmt(total),
          fmt(endpoint.calls - before),
          fmt(result.tokens),
          fmt(result.failed),
          fmt(result.wall),
        ]);
      }
    }
    await redis.stop();
  }
  console.log(`## ${total} forced refreshes (GET ?force=1) by one user through the token route (token endpoint ${endpoint.latencyMs} ms)\n`);
  console.log('Target: < 30 token-endpoint calls; every answer a token.\n');
  table(['backend', 'requests', 'forced requests', 'token-endpoint calls', 'distinct tokens', 'failed answers', 'wall ms'], rows);
}

// ---------------------------------------------------------------- 3. 60-second tokens
if (section('short')) {
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
      caches.push([
        `Redis, ${label}`,
        async () => {
          const { client, close } = await connect(redis.url);
          return { cache: createRedisTokenCache(client, { prefix: label + ':' }), close };
        },
      ]);
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

if (section('memory')) {
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
  for (let round = -1; round < rounds; round++) {
    // round -1 warms up
    const count = quick ? 20_000 : 100_000;
    const started = performance.now();
    for (let i = 0; i < count; i++) await exchange.getToken('busy');
    if (round >= 0) hitSamples.push(((performance.now() - started) * 1e6) / count);
  }
  console.log(`## In-memory cache: hit ns for one busy user (median of ${rounds} interleaved rounds; the same cache throughout)\n`);
  console.log('Target: <= 5x lru-cache at every fill.\n');
  table(['users cached', 'cache', 'ns per hit (median)', 'ns per hit (last round)', 'x lru-cache'], rows);
  console.log(`The whole \`exchange.getToken\` on a hit (default cache, awaited one by one): ${fmt(median(hitSamples))} ns.\n`);

  // The same hit with `telemetry` (issue #34): off, the API's no-op tracer, the SDK (tracer and meter).
  const variants = {
    'no telemetry': createTokenExchange({ baseUrl, ...credentials }),
    'no-op tracer': createTokenExchange({ baseUrl, ...credentials, telemetry: await benchTelemetry(false) }),
    'OTel SDK (tracer + meter)': createTokenExchange({ baseUrl, ...credentials, telemetry: await benchTelemetry(true) }),
  };
  const variantSamples = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
  for (const variant of Object.values(variants)) await variant.getToken('busy');
  for (let round = -1; round < rounds; round++) {
    for (const name of rotate(Object.keys(variants), Math.max(0, round))) {
      const count = quick ? 20_000 : 100_000;
      const started = performance.now();
      for (let i = 0; i < count; i++) await variants[name].getToken('busy');
      if (round >= 0) variantSamples[name].push(((performance.now() - started) * 1e6) / count);
    }
  }
  const off = median(variantSamples['no telemetry']);
  console.log(`## \`exchange.getToken\` on a hit with \`telemetry\` (median of ${rounds} interleaved rounds)\n`);
  table(
    ['telemetry', 'ns per getToken', 'x off'],
    Object.keys(variants).map((name) => [name, fmt(median(variantSamples[name])), fmt(median(variantSamples[name]) / off, 2)]),
  );
}

if (section('memory')) {
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
