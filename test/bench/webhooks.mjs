// Webhook receive benchmark: channel-sdk/server's handler on node:http against the floor (bare
// node:http + createHmac + JSON.parse) and two peers (@octokit/webhooks' node middleware, stripe's
// constructEvent on node:http), each in a server process of its own, loaded by autocannon from
// this process (concurrency 50). Rounds interleave the contenders in a fresh random order, so
// drift on a shared machine hits all alike; the tables give medians and per-round ratios.
//
//   npm run build && node --expose-gc test/bench/webhooks.mjs [--quick] [--rounds N] [--seconds S] [--only small|large|tampered|memory|stall] [--telemetry]
//     [--stall-connections N] [--stall-seconds S]
//
// `stall` (issue #21 item 3): N connections (1,000) each send a push's headers with a well-formed
// but wrong signature and 1 MiB minus one byte of body, then stall; meanwhile real signed pushes
// arrive every 500 ms. Reported per contender: server RSS, attack connections still open at
// 10/30/S seconds, how they were answered, and the real pushes' outcomes.
//
// A contender server is this same file run with `--serve <name>`.
import { fork } from 'node:child_process';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import { benchTelemetry } from './telemetry-setup.mjs';

const SECRET = 'whsec_bench_0123456789';
// --telemetry adds the handler with `telemetry`: the API's no-op tracer, and the OpenTelemetry SDK
// (a batch processor and an exporter that drops, a meter with no reader).
const TELEMETRY = ['channel-sdk (no-op tracer)', 'channel-sdk (OTel SDK)'];
const CONTENDERS = ['floor', 'channel-sdk', '@octokit/webhooks', 'stripe', ...(process.argv.includes('--telemetry') ? TELEMETRY : [])];

// ---------------------------------------------------------------- bodies
const event = { time: '2024-06-01T12:00:00+08:00', status: 'in_transit', desc: '快件已到达【深圳转运中心】，正在发往下一站' };
const shipment = {
  tracking_no: 'SF1234567890',
  express_company: '顺丰速运',
  express_code: 'SF',
  shipment_status: 'in_transit',
  shipped_at: '2024-06-01T10:00:00+08:00',
};
const pushBody = (events) =>
  JSON.stringify({
    event: 'logistics.updated',
    logistics: { order_no: 'SO20240601001', partner_order_no: 'P-10001', shipments: [{ ...shipment, events: Array.from({ length: events }, () => event) }] },
  });

// ---------------------------------------------------------------- servers (child side)
async function serve(name) {
  let handled = 0;
  const readBody = (req, done) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => done(Buffer.concat(chunks)));
  };
  let listener;
  if (name === 'floor') {
    // The least a correct receiver does: read, constant-time HMAC check, JSON.parse.
    listener = (req, res) =>
      readBody(req, (body) => {
        const given = Buffer.from(String(req.headers['x-channel-webhook-signature']), 'hex');
        const mac = createHmac('sha256', SECRET).update(body).digest();
        if (given.length !== mac.length || !timingSafeEqual(mac, given)) {
          res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"invalid signature"}');
          return;
        }
        JSON.parse(body.toString());
        handled++;
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      });
  } else if (name === 'channel-sdk' || TELEMETRY.includes(name)) {
    const { createWebhookHandler, toNodeHandler } = await import('channel-sdk/server');
    const telemetry = name === 'channel-sdk' ? undefined : await benchTelemetry(name === TELEMETRY[1]);
    listener = toNodeHandler(
      createWebhookHandler({ secret: SECRET, onLogisticsUpdated: () => void handled++, onError: () => {}, ...(telemetry ? { telemetry } : {}) }),
    );
  } else if (name === '@octokit/webhooks') {
    const { Webhooks, createNodeMiddleware } = await import('@octokit/webhooks');
    const webhooks = new Webhooks({ secret: SECRET });
    webhooks.on('ping', () => void handled++);
    const quiet = { debug() {}, info() {}, warn() {}, error() {} };
    listener = createNodeMiddleware(webhooks, { path: '/', log: quiet });
  } else if (name === 'stripe') {
    const Stripe = (await import('stripe')).default;
    const stripe = new Stripe('sk_test_bench');
    listener = (req, res) =>
      readBody(req, (body) => {
        try {
          stripe.webhooks.constructEvent(body, req.headers['stripe-signature'], SECRET, 1e9);
        } catch {
          res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"invalid signature"}');
          return;
        }
        handled++;
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      });
  }
  const server = createServer(listener);
  server.keepAliveTimeout = 60_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  let sampler;
  let peak = { rss: 0, heap: 0, external: 0 };
  process.on('message', (message) => {
    if (message === 'handled') process.send({ handled });
    if (message === 'baseline') {
      globalThis.gc?.();
      globalThis.gc?.();
      const m = process.memoryUsage();
      peak = { rss: m.rss, heap: m.heapUsed, external: m.external + m.arrayBuffers };
      process.send({ baseline: peak });
      sampler = setInterval(() => {
        const now = process.memoryUsage();
        peak = {
          rss: Math.max(peak.rss, now.rss),
          heap: Math.max(peak.heap, now.heapUsed),
          external: Math.max(peak.external, now.external + now.arrayBuffers),
        };
      }, 2);
    }
    if (message === 'peak') {
      clearInterval(sampler);
      process.send({ peak });
    }
    if (message === 'now') server.getConnections((_error, connections) => process.send({ rss: process.memoryUsage().rss, connections }));
  });
  process.send({ port: server.address().port });
}

if (process.argv[2] === '--serve') {
  await serve(process.argv[3]);
} else {
  await main();
}

// ---------------------------------------------------------------- load (parent side)
async function main() {
  const autocannon = (await import('autocannon')).default;
  const Stripe = (await import('stripe')).default;
  const args = process.argv.slice(2);
  const quick = args.includes('--quick');
  const option = (flag, fallback) => (args.includes(flag) ? Number(args[args.indexOf(flag) + 1]) : fallback);
  const rounds = option('--rounds', quick ? 3 : 7);
  const seconds = option('--seconds', quick ? 1 : 3);
  // --only small|large|tampered|memory|stall (repeatable): run just those scenarios.
  const only = args.flatMap((arg, i) => (arg === '--only' ? [args[i + 1]] : []));
  const wanted = (scenario) => only.length === 0 || only.includes(scenario);

  const stripe = new Stripe('sk_test_bench');
  const timestamp = Math.floor(Date.now() / 1000);
  function requestFor(name, body, tampered) {
    const hex = createHmac('sha256', SECRET).update(body).digest('hex');
    const bad = (hex[0] === 'a' ? 'b' : 'a') + hex.slice(1);
    const headers = { 'content-type': 'application/json' };
    if (name === '@octokit/webhooks') {
      Object.assign(headers, { 'x-github-event': 'ping', 'x-github-delivery': 'bench-1', 'x-hub-signature-256': 'sha256=' + (tampered ? bad : hex) });
    } else if (name === 'stripe') {
      const header = stripe.webhooks.generateTestHeaderString({ payload: body, secret: SECRET, timestamp });
      headers['stripe-signature'] = tampered ? header.replace(/v1=./, (m) => (m.endsWith('a') ? 'v1=b' : 'v1=a')) : header;
    } else {
      headers['x-channel-webhook-signature'] = tampered ? bad : hex;
    }
    return { method: 'POST', headers, body };
  }

  const servers = {};
  for (const name of CONTENDERS) {
    const child = fork(new URL(import.meta.url), ['--serve', name], { execArgv: ['--expose-gc'], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    const { port } = await new Promise((resolve) => child.once('message', resolve));
    servers[name] = { child, url: `http://127.0.0.1:${port}/` };
  }
  const median = (xs) => {
    const s = xs.toSorted((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  };
  const shuffle = (xs) => {
    const a = [...xs];
    for (let i = a.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [a[i], a[j]] = [a[j], a[i]];
    }
    return a;
  };
  const fmt = (n, digits = 0) => n.toLocaleString('en', { maximumFractionDigits: digits, minimumFractionDigits: digits });
  const mib = (n) => fmt(n / 1024 / 1024, 1);
  const out = [];
  const table = (title, head, rows, note) => {
    out.push(
      `**${title}**\n`,
      '| ' + head.join(' | ') + ' |',
      '|' + head.map(() => '---').join('|') + '|',
      ...rows.map((r) => '| ' + r.join(' | ') + ' |'),
      '',
    );
    if (note) out.push(note, '');
    console.log(out.splice(0).join('\n'));
  };

  async function load(name, request, duration) {
    const result = await autocannon({ url: servers[name].url, connections: 50, duration, ...request });
    return { ok: result['2xx'] / duration, rejected: result.non2xx / duration, errors: result.errors + result.timeouts };
  }

  // Every contender must accept a signed push and refuse a tampered one before it is timed.
  for (const name of CONTENDERS) {
    const body = pushBody(6);
    const good = await fetch(servers[name].url, requestFor(name, body, false));
    const bad = await fetch(servers[name].url, requestFor(name, body, true));
    if (good.status !== 200 || bad.status < 400) throw new Error(`${name}: signed -> ${good.status}, tampered -> ${bad.status}`);
  }

  async function compare(title, body, tampered, metric) {
    const samples = Object.fromEntries(CONTENDERS.map((n) => [n, []]));
    const ratios = Object.fromEntries(CONTENDERS.map((n) => [n, []]));
    const requests = Object.fromEntries(CONTENDERS.map((n) => [n, requestFor(n, body, tampered)]));
    for (const name of CONTENDERS) await load(name, requests[name], 1); // warm-up
    let errors = 0;
    for (let round = 0; round < rounds; round++) {
      const perRound = {};
      for (const name of shuffle(CONTENDERS)) {
        const r = await load(name, requests[name], seconds);
        errors += r.errors;
        perRound[name] = r[metric];
        samples[name].push(r[metric]);
      }
      for (const name of CONTENDERS) ratios[name].push(perRound[name] / perRound.floor);
    }
    const spread = (name) => {
      const s = samples[name];
      return fmt((100 * (Math.max(...s) - Math.min(...s))) / median(s), 0) + '%';
    };
    table(
      title,
      [
        'receiver',
        metric === 'ok' ? 'req/s (median)' : 'rejected/s (median)',
        '× floor (median of per-round ratios)',
        'per-round ratio range',
        'spread of req/s (max−min)/median',
      ],
      CONTENDERS.map((n) => [
        n,
        fmt(median(samples[n])),
        fmt(median(ratios[n]), 2),
        `${fmt(Math.min(...ratios[n]), 2)}–${fmt(Math.max(...ratios[n]), 2)}`,
        spread(n),
      ]),
      `${rounds} rounds × ${seconds} s per contender, interleaved in random order; ${Buffer.byteLength(body).toLocaleString('en')}-byte body; autocannon, 50 connections${errors ? `; ${errors} socket errors/timeouts` : ''}.`,
    );
  }

  const small = pushBody(6);
  const large = pushBody(759);
  console.log(`# Webhook receive (Node ${process.version}, ${new Date().toISOString().slice(0, 10)})\n`);
  if (wanted('small')) await compare('Signed push, ~1 KB', small, false, 'ok');
  if (wanted('large')) await compare('Signed push, ~100 KB (759 tracking events)', large, false, 'ok');
  if (wanted('tampered')) await compare('Tampered push, ~1 KB: rejections per second', small, true, 'rejected');
  if (wanted('memory')) await memoryScenario();
  for (const { child } of Object.values(servers)) child.kill();
  if (wanted('stall')) await stallScenario();

  async function stallScenario() {
    const count = option('--stall-connections', 1000);
    const stallSeconds = option('--stall-seconds', 60);
    const { connect } = await import('node:net');
    const { request } = await import('node:http');
    const filler = Buffer.alloc(1024 * 1024 - 1, 'x'); // one shared buffer for every socket
    const rows = [];
    for (const name of CONTENDERS) {
      const child = fork(new URL(import.meta.url), ['--serve', name], { execArgv: ['--expose-gc'], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
      const { port } = await new Promise((resolve) => child.once('message', resolve));
      const ask1 = (message) => new Promise((resolve) => (child.once('message', resolve), child.send(message)));
      const { baseline } = await ask1('baseline');
      const forged = requestFor(name, filler.toString() + '}', true).headers; // a well-formed, wrong signature
      const head = Object.entries({ host: '127.0.0.1', ...forged, 'content-length': 1024 * 1024 }).map(([k, v]) => `${k}: ${v}\r\n`);
      const wire = Buffer.from(`POST / HTTP/1.1\r\n${head.join('')}\r\n`, 'latin1');
      const started = performance.now();
      const attack = Array.from({ length: count }, () => {
        const state = { closedAt: undefined, status: undefined };
        const socket = connect(port, '127.0.0.1', () => {
          socket.write(wire);
          socket.write(filler);
        });
        socket.on('data', (chunk) => (state.status ??= Number(chunk.toString('latin1', 9, 12))));
        socket.on('error', () => {});
        socket.on('close', () => (state.closedAt = performance.now() - started));
        state.socket = socket;
        return state;
      });
      // Real signed pushes on fresh connections, every 500 ms for the first 20 s, each given the
      // service's 8 s.
      const real = requestFor(name, pushBody(6), false);
      const pushes = [];
      const pusher = setInterval(() => {
        pushes.push(
          new Promise((resolve) => {
            const t = performance.now();
            const req = request(`http://127.0.0.1:${port}/`, { method: 'POST', headers: real.headers, agent: false, timeout: 8000 }, (res) => {
              res.resume();
              res.on('end', () => resolve({ status: res.statusCode, ms: performance.now() - t }));
            });
            req.on('timeout', () => req.destroy(new Error('timeout')));
            req.on('error', () => resolve({ status: 'none', ms: performance.now() - t }));
            req.end(real.body);
          }),
        );
      }, 500);
      const at = async (s) => {
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, s * 1000 - (performance.now() - started))));
        const now = await ask1('now');
        return { open: attack.filter((c) => c.closedAt === undefined).length, connections: now.connections, rss: now.rss };
      };
      const marks = [];
      for (const s of [10, 20]) marks.push(await at(s));
      clearInterval(pusher);
      marks.push(await at(30));
      marks.push(await at(stallSeconds));
      const { peak } = await ask1('peak');
      child.kill();
      for (const c of attack) c.socket.destroy();
      const done = await Promise.all(pushes);
      const answered = {};
      for (const c of attack) answered[c.status ?? 'none'] = (answered[c.status ?? 'none'] ?? 0) + 1;
      // Served: 2xx within the service's 8 s window.
      const ok = done.filter((p) => p.status >= 200 && p.status < 300 && p.ms <= 8000);
      rows.push([
        name,
        mib(peak.rss),
        mib(marks[3].rss),
        `${marks[0].open} / ${marks[2].open} / ${marks[3].open}`,
        Object.entries(answered)
          .map(([status, n]) => `${status}: ${n}`)
          .join(', '),
        `${ok.length}/${done.length}`,
        ok.length ? fmt(Math.max(...ok.map((p) => p.ms))) : '–',
      ]);
      console.error(`[stall] ${name}: baseline RSS ${mib(baseline.rss)} MiB, marks ${JSON.stringify(marks)}`);
    }
    table(
      `${count.toLocaleString('en')} connections sending 1 MiB minus one byte, then stalling (signature well-formed but wrong)`,
      [
        'receiver',
        'peak RSS MiB',
        `RSS at ${stallSeconds} s MiB`,
        `attack connections open at 10 / 30 / ${stallSeconds} s`,
        'how they were answered (status: count)',
        'real pushes served: 2xx within 8 s (sent every 500 ms, first 20 s)',
        'slowest real push ms',
      ],
      rows,
      `A fresh server process per receiver with its defaults (node:http: requestTimeout 300 s); RSS of the server process, sampled every 2 ms.`,
    );
  }

  async function memoryScenario() {
    // Memory: 100 concurrent 1 MiB pushes, all on the wire at once (100 raw sockets, one shared
    // request buffer on the client side), against a FRESH server process each time (RSS does not
    // shrink back between rounds); peak over that process's idle baseline after GC.
    const huge = pushBody(Math.floor((1000 * 1024) / Buffer.byteLength(JSON.stringify(event) + ',')));
    const { connect } = await import('node:net');
    const blast = (port, wire) =>
      Promise.all(
        Array.from(
          { length: 100 },
          () =>
            new Promise((resolve, reject) => {
              const socket = connect(port, '127.0.0.1', () => socket.end(wire));
              let head = '';
              socket.on('data', (chunk) => (head += chunk.toString('latin1', 0, 16)));
              socket.on('error', reject);
              socket.on('close', () => resolve(Number(head.slice(9, 12))));
            }),
        ),
      );
    const memory = Object.fromEntries(CONTENDERS.map((n) => [n, []]));
    const memoryRounds = rounds;
    for (let round = 0; round < memoryRounds; round++) {
      for (const name of shuffle(CONTENDERS)) {
        const child = fork(new URL(import.meta.url), ['--serve', name], { execArgv: ['--expose-gc'], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
        const { port } = await new Promise((resolve) => child.once('message', resolve));
        const ask1 = (message) => new Promise((resolve) => (child.once('message', resolve), child.send(message)));
        const { headers, body } = requestFor(name, huge, false);
        const head = Object.entries({ host: '127.0.0.1', 'content-length': Buffer.byteLength(body), connection: 'close', ...headers }).map(
          ([k, v]) => `${k}: ${v}\r\n`,
        );
        const wire = Buffer.concat([Buffer.from(`POST / HTTP/1.1\r\n${head.join('')}\r\n`, 'latin1'), Buffer.from(body)]);
        const { baseline } = await ask1('baseline');
        const statuses = await blast(port, wire);
        const { peak } = await ask1('peak');
        child.kill();
        if (statuses.some((s) => s !== 200)) throw new Error(`${name}: 1 MiB push answered ${statuses.find((s) => s !== 200)}`);
        memory[name].push({ rss: peak.rss - baseline.rss, buffers: peak.external - baseline.external, heap: peak.heap - baseline.heap });
      }
    }
    const ratio = (name, key) => fmt(median(memory[name].map((m) => m[key])) / median(memory.floor.map((m) => m[key])), 2);
    table(
      `100 concurrent ${(Buffer.byteLength(huge) / 1024 / 1024).toFixed(2)} MiB pushes: peak memory over an idle server's baseline`,
      ['receiver', 'RSS growth MiB', '× floor', 'ArrayBuffers + external MiB', '× floor', 'JS heap growth MiB', '× floor', 'RSS growth range MiB'],
      CONTENDERS.map((n) => {
        const rss = memory[n].map((m) => m.rss);
        return [
          n,
          mib(median(rss)),
          ratio(n, 'rss'),
          mib(median(memory[n].map((m) => m.buffers))),
          ratio(n, 'buffers'),
          mib(median(memory[n].map((m) => m.heap))),
          ratio(n, 'heap'),
          `${mib(Math.min(...rss))}–${mib(Math.max(...rss))}`,
        ];
      }),
      `Median of ${memoryRounds} rounds, contenders interleaved, a fresh server process each; sampled every 2 ms in the server.`,
    );
  }
}
