// Webhook inbox benchmark (issue #33), beside webhooks.mjs; `npm run bench` runs it, or
//   npm run build && node test/bench/inbox.mjs [--quick] [--rounds N] [--seconds S]
//
// 1. Answer time and throughput, three receivers in server processes of their own on one private
//    redis-server, loaded by autocannon from this process (50 connections, every push a distinct,
//    signed ~1 KB body), rounds interleaved in a random order:
//    - floor: bare node:http that only appends the body to a stream (XADD through ioredis);
//    - channel-sdk inbox: createWebhookHandler({ secret, inbox: createRedisInbox(ioredis) });
//    - channel-sdk, no inbox: createWebhookHandler({ secret, onLogisticsUpdated }) whose callback
//      takes 300 ms (what a partner's slow database write costs without an inbox).
// 2. A killed worker: pushes stored, a worker process (300 ms callbacks) takes them and is
//    SIGKILLed mid-run, another starts; pushes lost, pushes run twice, and the pushes it held at the kill.
//
// A receiver is this same file run with `--serve <name> <redis url>`.
import { fork } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';

const SECRET = 'whsec_bench_inbox';
const CALLBACK_MS = 300;
const CONTENDERS = ['floor', 'channel-sdk inbox', 'channel-sdk, no inbox (300 ms callback)'];

async function serve(name, redisUrl) {
  const { Redis } = await import('ioredis');
  const redis = new Redis(redisUrl);
  let listener;
  if (name === 'floor') {
    listener = (req, res) => {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () =>
        redis.xadd('floor:stream', '*', 'b', Buffer.concat(chunks)).then(
          () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'),
          () => res.writeHead(503).end(),
        ),
      );
    };
  } else {
    const { createRedisInbox, createWebhookHandler, toNodeHandler } = await import('channel-sdk/server');
    const options =
      name === 'channel-sdk inbox'
        ? { inbox: createRedisInbox(redis, { prefix: 'bench:' }) }
        : { onLogisticsUpdated: () => new Promise((resolve) => setTimeout(resolve, CALLBACK_MS)) };
    listener = toNodeHandler(createWebhookHandler({ secret: SECRET, onError: () => {}, ...options }));
  }
  const server = createServer(listener);
  server.keepAliveTimeout = 60_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.on('message', (message) => message === 'cpu' && process.send({ cpu: process.cpuUsage() }));
  process.send({ port: server.address().port });
}

if (process.argv[2] === '--serve') await serve(process.argv[3], process.argv[4]);
else await main();

async function main() {
  const autocannon = (await import('autocannon')).default;
  const { Redis } = await import('ioredis');
  const { startRedis } = await import('../helpers/redis-server.mjs');
  const { startInboxProcess, readLog } = await import('../server/webhooks/inbox/inbox-processes.mjs');
  const { createRedisInbox, createWebhookHandler } = await import('channel-sdk/server');
  const args = process.argv.slice(2);
  const quick = args.includes('--quick');
  const option = (flag, fallback) => (args.includes(flag) ? Number(args[args.indexOf(flag) + 1]) : fallback);
  const rounds = option('--rounds', quick ? 2 : 5);
  const seconds = option('--seconds', quick ? 1 : 3);
  const redisServer = await startRedis();
  const redis = new Redis(redisServer.url);
  const median = (xs) => {
    const s = xs.toSorted((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  };
  const shuffle = (xs) =>
    xs
      .map((x) => [Math.random(), x])
      .toSorted((a, b) => a[0] - b[0])
      .map(([, x]) => x);
  const fmt = (n, digits = 0) => n.toLocaleString('en', { maximumFractionDigits: digits, minimumFractionDigits: digits });
  const table = (title, head, rows, note) =>
    console.log(
      [
        '',
        `**${title}**`,
        '',
        '| ' + head.join(' | ') + ' |',
        '|' + head.map(() => '---').join('|') + '|',
        ...rows.map((r) => '| ' + r.join(' | ') + ' |'),
        '',
        note ?? '',
      ].join('\n'),
    );

  // Distinct bodies (the inbox would answer a repeat as a duplicate without storing it), ~1 KB.
  let sequence = 0;
  const event = { time: '2024-06-01T12:00:00+08:00', status: 'in_transit', desc: '快件已到达【深圳转运中心】，正在发往下一站' };
  const bodyFor = (n) =>
    JSON.stringify({
      event: 'logistics.updated',
      logistics: {
        order_no: 'SO-bench-' + n,
        shipments: [
          {
            tracking_no: 'SF' + n,
            express_company: '顺丰速运',
            express_code: 'SF',
            shipment_status: 'in_transit',
            events: Array.from({ length: 6 }, () => event),
          },
        ],
      },
    });
  const signed = (body) => ({ 'content-type': 'application/json', 'x-channel-webhook-signature': createHmac('sha256', SECRET).update(body).digest('hex') });
  const request = {
    method: 'POST',
    setupRequest: (req) => {
      const body = bodyFor(++sequence);
      return { ...req, body, headers: signed(body) };
    },
  };

  const servers = {};
  for (const name of CONTENDERS) {
    const child = fork(new URL(import.meta.url), ['--serve', name, redisServer.url], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    const { port } = await new Promise((resolve) => child.once('message', resolve));
    servers[name] = { child, url: `http://127.0.0.1:${port}/` };
  }
  // CPU time (user + system) of the receiver process and of redis-server, per answer: what a push
  // costs whatever else the machine runs, where answer times and throughput depend on the load.
  const receiverCpu = (name) =>
    new Promise((resolve) => {
      const { child } = servers[name];
      child.once('message', ({ cpu }) => resolve(cpu.user + cpu.system));
      child.send('cpu');
    });
  const redisCpu = async () => {
    const info = await redis.info('cpu');
    const read = (field) => Number(new RegExp(field + ':([\\d.]+)').exec(info)[1]);
    return (read('used_cpu_user') + read('used_cpu_sys')) * 1e6;
  };
  const load = async (name, duration) => {
    const [cpu0, redis0] = [await receiverCpu(name), await redisCpu()];
    const r = await autocannon({ url: servers[name].url, connections: 50, duration, requests: [request] });
    const [cpu1, redis1] = [await receiverCpu(name), await redisCpu()];
    const answers = Math.max(1, r['2xx']);
    return {
      p50: r.latency.p50,
      p99: r.latency.p99,
      ok: r['2xx'] / duration,
      failed: r.non2xx + r.errors + r.timeouts,
      cpu: (cpu1 - cpu0) / answers,
      redisCpu: (redis1 - redis0) / answers,
    };
  };
  console.log(`# Webhook inbox (Node ${process.version}, ${new Date().toISOString().slice(0, 10)})`);
  for (const name of CONTENDERS) await load(name, 1); // warm-up
  const samples = Object.fromEntries(CONTENDERS.map((n) => [n, []]));
  // Ratios to the floor within each round (drift on a shared machine hits a round's contenders alike).
  const ratios = Object.fromEntries(CONTENDERS.map((n) => [n, { p50: [], p99: [], ok: [] }]));
  let failed = 0;
  for (let round = 0; round < rounds; round++) {
    const perRound = {};
    for (const name of shuffle(CONTENDERS)) {
      const r = await load(name, seconds);
      failed += r.failed;
      samples[name].push(r);
      perRound[name] = r;
    }
    for (const name of CONTENDERS) for (const key of ['p50', 'p99', 'ok']) ratios[name][key].push(perRound[name][key] / perRound.floor[key]);
    await redis.flushall(); // the streams would otherwise grow round after round
  }
  const m = (name, key) => median(samples[name].map((r) => r[key]));
  const ratio = (name, key) => fmt(median(ratios[name][key]), 2);
  table(
    'Answer time and throughput, signed ~1 KB pushes, 50 connections',
    [
      'receiver',
      'p50 ms',
      'p99 ms',
      'answers/s',
      'p50 × floor',
      'p99 × floor',
      'throughput × floor',
      'receiver CPU µs / answer',
      'redis-server CPU µs / answer',
    ],
    CONTENDERS.map((n) => [
      n,
      fmt(m(n, 'p50'), 1),
      fmt(m(n, 'p99'), 1),
      fmt(m(n, 'ok')),
      ratio(n, 'p50'),
      ratio(n, 'p99'),
      ratio(n, 'ok'),
      fmt(m(n, 'cpu')),
      fmt(m(n, 'redisCpu')),
    ]),
    `Medians of ${rounds} rounds × ${seconds} s per receiver, interleaved in random order (the ratios: medians of per-round ratios); one redis-server (no persistence) for all; autocannon's latency percentiles${failed ? `; ${failed} non-2xx or socket errors` : ''}. No worker runs during these rounds. Load average ${(await import('node:os')).loadavg()[0].toFixed(1)} on ${(await import('node:os')).cpus().length} cores at the end.`,
  );
  for (const { child } of Object.values(servers)) child.kill();

  // ---------------------------------------------------------------- a killed worker
  const total = quick ? 200 : 600;
  const prefix = 'kill:';
  const handler = createWebhookHandler({ secret: SECRET, inbox: createRedisInbox(redis, { prefix }) });
  for (let i = 0; i < total; i++) {
    const body = bodyFor('kill-' + i);
    const res = await handler(new Request('http://bench/', { method: 'POST', body, headers: signed(body) }));
    if (res.status !== 202) throw new Error('push ' + i + ' answered ' + res.status);
  }
  const inboxOptions = { leaseMs: 3000, timeoutMs: 1000 };
  const work = { concurrency: 10, callbackMs: CALLBACK_MS };
  const started = performance.now();
  const doomed = await startInboxProcess({ client: 'ioredis', redisUrl: redisServer.url, prefix, inboxOptions, work });
  const log = () => readLog((...a) => redis.lrange(...a), prefix);
  while ((await log()).lines.length < total / 3) await new Promise((r) => setTimeout(r, 20));
  await doomed.kill();
  // What it held at the kill: every entry pending then (it was the only worker).
  const stream = '{' + prefix + 'inbox}:stream';
  const heldKeys = new Set();
  for (const [id] of await redis.xpending(stream, 'workers', '-', '+', 1000)) heldKeys.add((await redis.xrange(stream, id, id))[0]?.[1]?.[1]);
  const survivor = await startInboxProcess({ client: 'ioredis', redisUrl: redisServer.url, prefix, inboxOptions, work });
  for (;;) {
    const { byKey } = await log();
    if ([...byKey.values()].filter((r) => r.ends.length > 0).length === total) break;
    if (performance.now() - started > 120_000) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const drainedMs = performance.now() - started;
  const { byKey } = await log();
  const processed = [...byKey.values()].filter((r) => r.ends.length > 0).length;
  const twice = [...byKey].filter(([, r]) => r.starts.length > 1).map(([key]) => key);
  const killedInFlight = [...byKey].filter(([, r]) => r.starts.includes(doomed.pid) && !r.ends.includes(doomed.pid)).length;
  table(
    'A worker SIGKILLed mid-run, another started after it',
    [
      'pushes',
      'processed',
      'lost',
      'run twice',
      'held by the killed worker (in Redis)',
      'its callbacks cut short',
      'run twice outside those held',
      'drained in',
      'pushes/s (10 at once per worker, 300 ms callbacks)',
    ],
    [
      [
        total,
        processed,
        total - processed,
        twice.length,
        heldKeys.size,
        killedInFlight,
        twice.filter((key) => !heldKeys.has(key)).length,
        fmt(drainedMs / 1000, 1) + ' s',
        fmt(total / (drainedMs / 1000)),
      ],
    ],
    `The killed worker's pushes go to the other once its lease (${inboxOptions.leaseMs} ms) lapses.`,
  );
  await survivor.close();
  redis.disconnect();
  await redisServer.stop();
}
