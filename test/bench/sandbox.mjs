// node test/bench/sandbox.mjs (after npm run build): does the sandbox stay fast as it runs?
//  1. Token endpoint: 8,000 tokens on a fresh sandbox against 8,000 more on one that has
//     issued 50,000 (every nonce of those is still held: the window keeps them 601 s), in
//     interleaved rounds, each round on a new fresh sandbox; medians. Target: after / fresh >= 0.8.
//  2. Data route (GET /open/api/v1/sdk/orders with a Bearer JWT) against a bare JSON
//     node:http route answering the same body, and that route plus an HS256 check on
//     node:crypto per request; rounds interleaved, medians. Target: data route / bare >= 0.5.
//     (The sandbox remembers the tokens whose signature it checked; the load repeats one.)
// The servers run in a child process; the load comes from this one over loopback: 50
// keep-alive connections on raw sockets, each sending its next request when the answer is in.
// Each measure reports requests/s and the server process's CPU time per request: on a shared
// machine the load generator can be the bottleneck (then every route runs at its speed), and
// CPU per request still shows what each route costs. One run; read the ratios, not the rates.
import { fork } from 'node:child_process';
import { createHash, createHmac, createSecretKey, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import { connect } from 'node:net';
import { performance } from 'node:perf_hooks';

const CONCURRENCY = 50;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const ROUNDS = 3;
const TOKENS = 50_000;

// ---------------------------------------------------------------- the servers (child process)
async function child() {
  const { startSandbox } = await import('channel-sdk/testing');
  const start = () => startSandbox({ credentials: { accessKey: 'ak_bench', secretKey: 'sk_bench' } });
  const sandbox = await start();
  const fresh = await Promise.all(Array.from({ length: ROUNDS }, start));
  const filled = await start();
  const portOf = (s) => Number(new URL(s.url).port);
  const token = await sandbox.issueToken('bench-user');
  const { orders } = (await (await fetch(sandbox.url + '/open/api/v1/sdk/orders', { headers: { authorization: 'Bearer ' + token } })).json()).data;
  const listen = async (handler) => {
    const server = createServer(handler);
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    return server.address().port;
  };
  const send = (res) => {
    const text = JSON.stringify({ code: 0, data: { orders } });
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };
  // The floor: read the request, answer the same JSON.
  const bare = await listen((req, res) => {
    req.resume();
    req.on('end', () => send(res));
  });
  // The floor plus the least an HS256 check costs: one HMAC over header.payload, one compare.
  const key = createSecretKey(Buffer.from('bench-key-bench-key-bench-key-32'));
  const [h, p] = token.split('.');
  const signed = `${h}.${p}.${createHmac('sha256', key).update(`${h}.${p}`).digest('base64url')}`;
  const hs256 = await listen((req, res) => {
    req.resume();
    req.on('end', () => {
      const jwt = (req.headers.authorization ?? '').slice(7);
      const [header, payload, signature = ''] = jwt.split('.');
      const expected = createHmac('sha256', key).update(`${header}.${payload}`).digest('base64url');
      const ok = signature.length === expected.length && timingSafeEqual(Buffer.from(signature), Buffer.from(expected));
      if (!ok || JSON.parse(Buffer.from(payload, 'base64url').toString()).sub !== 'bench-user') return void res.writeHead(401).end();
      send(res);
    });
  });
  process.on('message', (m) => {
    if (m === 'stats') process.send({ stats: { filled: { ...filled.stats }, fresh: fresh.map((f) => ({ ...f.stats })) } });
    if (m === 'cpu') {
      const { user, system } = process.cpuUsage();
      process.send({ cpu: user + system });
    }
  });
  process.send({ sandbox: portOf(sandbox), fresh: fresh.map(portOf), filled: portOf(filled), bare, hs256, token, hs256Token: signed });
}

// ---------------------------------------------------------------- the load (this process)
const HEAD_END = Buffer.from('\r\n\r\n');
const LENGTH = [Buffer.from('content-length: '), Buffer.from('Content-Length: ')];

/** Runs CONCURRENCY keep-alive connections until `seconds` pass or `until(done)`; each sends `next()` when its answer is in. */
function load(port, next, { seconds = SECONDS, until } = {}) {
  return new Promise((resolve) => {
    const latencies = [];
    const statuses = {};
    let done = 0;
    let open = CONCURRENCY;
    const started = performance.now();
    const stopAt = started + seconds * 1000;
    const finished = () => (until ? until(done) : performance.now() >= stopAt);
    for (let c = 0; c < CONCURRENCY; c++) {
      const socket = connect(port, '127.0.0.1');
      socket.setNoDelay(true);
      let buffer = Buffer.alloc(0);
      let sentAt = 0;
      const send = () => {
        sentAt = performance.now();
        socket.write(next());
      };
      socket.on('connect', send);
      socket.on('data', (chunk) => {
        buffer = buffer.length ? Buffer.concat([buffer, chunk]) : chunk;
        for (;;) {
          const end = buffer.indexOf(HEAD_END);
          if (end < 0) return;
          let at = -1;
          for (const name of LENGTH) if ((at = buffer.lastIndexOf(name, end)) >= 0) break;
          let length = 0;
          for (let i = at < 0 ? end : at + 16; buffer[i] >= 48 && buffer[i] <= 57; i++) length = length * 10 + buffer[i] - 48;
          if (buffer.length < end + 4 + length) return;
          const status = buffer.toString('latin1', 9, 12);
          buffer = buffer.subarray(end + 4 + length);
          statuses[status] = (statuses[status] ?? 0) + 1;
          latencies.push(performance.now() - sentAt);
          done++;
          if (finished()) {
            socket.destroy();
            if (--open === 0) {
              const elapsed = (performance.now() - started) / 1000;
              latencies.sort((a, b) => a - b);
              const q = (p) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))];
              resolve({ rate: done / elapsed, done, statuses, p50: q(0.5), p99: q(0.99) });
            }
            return;
          }
          send();
        }
      });
      socket.on('error', (error) => {
        console.error('load generator:', error.message);
        process.exit(1);
      });
    }
  });
}

function requests(ports) {
  const host = `Host: 127.0.0.1:${ports.sandbox}\r\n`;
  const tokenBody = '{"external_user_id":"bench-user"}';
  const bodyHash = createHash('sha256').update(tokenBody).digest('hex');
  let nonce = 0;
  // A reference-signed token request with a fresh nonce (the scheme the sandbox verifies).
  const token = () => {
    const timestamp = String(Math.floor(Date.now() / 1000));
    const n = (++nonce).toString(16).padStart(32, '0');
    const path = '/open/api/v1/sdk/tokens';
    const signature = createHmac('sha256', 'sk_bench').update(['POST', path, 'ak_bench', timestamp, n, bodyHash].join('\n')).digest('hex');
    return `POST ${path} HTTP/1.1\r\n${host}Content-Type: application/json\r\nContent-Length: ${tokenBody.length}\r\nX-Channel-Key: ak_bench\r\nX-Channel-Timestamp: ${timestamp}\r\nX-Channel-Nonce: ${n}\r\nX-Channel-Signature: ${signature}\r\n\r\n${tokenBody}`;
  };
  const get = (port, jwt) => {
    const bytes = Buffer.from(
      `GET /open/api/v1/sdk/orders HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${jwt}\r\nAccept: application/json\r\n\r\n`,
    );
    return () => bytes;
  };
  return { token, data: get(ports.sandbox, ports.token), bare: get(ports.bare, ports.token), hs256: get(ports.hs256, ports.hs256Token) };
}

const median = (values) => values.toSorted((a, b) => a - b)[Math.floor(values.length / 2)];
const fmt = (n, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

async function main() {
  const server = fork(new URL(import.meta.url).pathname, ['--child'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ports = await new Promise((r) => server.once('message', r));
  const ask = (what) => new Promise((r) => (server.once('message', (m) => r(m[what])), server.send(what)));
  const make = requests(ports);
  /** One measure: the load's result plus the server process's CPU µs per request. */
  const measure = async (what, port, next, options) => {
    const cpu = await ask('cpu');
    const result = await load(port, next, options);
    result.cpuPerRequest = ((await ask('cpu')) - cpu) / result.done;
    if (Object.keys(result.statuses).join() !== '200') throw new Error(`${what}: answers ${JSON.stringify(result.statuses)}, expected only 200`);
    return result;
  };
  // 1. Token endpoint: fresh sandboxes against the one filled with 50,000 tokens, interleaved.
  await measure('warm-up', ports.sandbox, make.token, { until: (n) => n >= 2_000 });
  const fillStart = performance.now();
  await load(ports.filled, make.token, { until: (n) => n >= TOKENS });
  const fillSeconds = (performance.now() - fillStart) / 1000;
  const tokenRuns = { fresh: [], filled: [] };
  const windows = [];
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 ? ['filled', 'fresh'] : ['fresh', 'filled'];
    for (const which of order) {
      const from = which === 'fresh' ? 0 : (await ask('stats')).filled.tokensIssued;
      tokenRuns[which].push(await measure(`tokens, ${which}`, which === 'fresh' ? ports.fresh[round] : ports.filled, make.token, { until: (n) => n >= 8_000 }));
      if (which === 'filled') windows.push(from);
    }
  }
  const stats = await ask('stats');

  // 2. Data route against the floors, interleaved, order rotating each round.
  const contenders = [
    ['bare node:http JSON route (floor)', ports.bare, make.bare],
    ['same + an HS256 check on node:crypto per request', ports.hs256, make.hs256],
    ['sandbox data route (Bearer JWT; a token seen before is a Map hit)', ports.sandbox, make.data],
  ];
  const results = new Map(contenders.map(([name]) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < contenders.length; i++) {
      const [name, port, next] = contenders[(i + round) % contenders.length];
      results.get(name).push(await measure(name, port, next));
    }
  }
  server.kill();

  const med = (name, key) => median(results.get(name).map((r) => r[key]));
  const floor = contenders[0][0];
  const tmed = (which, key) => median(tokenRuns[which].map((r) => r[key]));
  const tokenRow = (label, which, ratio) =>
    `| ${label} | ${fmt(tmed(which, 'rate'))} | ${fmt(tmed(which, 'p50'), 1)} | ${fmt(tmed(which, 'p99'), 1)} | ${fmt(tmed(which, 'cpuPerRequest'), 1)} | ${ratio} |`;
  const refused = stats.filled.tokenRejections + stats.fresh.reduce((n, f) => n + f.tokenRejections, 0);
  console.log(`## Sandbox speed (node ${process.version}, ${CONCURRENCY} connections, loopback, one run)

Token endpoint, \`POST /open/api/v1/sdk/tokens\` (reference-signed, a fresh nonce each), 8,000 tokens per measure, ${ROUNDS} interleaved rounds, medians:

| measured | tokens/s | p50 ms | p99 ms | server CPU µs/token | × fresh (rate; CPU) |
|---|---|---|---|---|---|
${tokenRow('fresh sandbox: tokens 1 to 8,000', 'fresh', '1.00; 1.00')}
${tokenRow(`after 50,000: tokens ${windows.map((w) => fmt(w + 1)).join(', ')}… (+8,000 each)`, 'filled', `**${fmt(tmed('filled', 'rate') / tmed('fresh', 'rate'), 2)}; ${fmt(tmed('fresh', 'cpuPerRequest') / tmed('filled', 'cpuPerRequest'), 2)}** (target ≥ 0.8)`)}

Filling the first ${fmt(TOKENS)} tokens took ${fmt(fillSeconds, 1)} s (${fmt(TOKENS / fillSeconds)}/s); token requests refused in the whole run: ${refused}.

Data route against a bare \`node:http\` JSON route answering the same body (${ROUNDS} interleaved rounds of ${SECONDS} s, medians):

| route | req/s | p99 ms | server CPU µs/request | × bare (rate; CPU) |
|---|---|---|---|---|
${contenders
  .map(([name]) => {
    const ratio = `${fmt(med(name, 'rate') / med(floor, 'rate'), 2)}; ${fmt(med(floor, 'cpuPerRequest') / med(name, 'cpuPerRequest'), 2)}`;
    return `| ${name} | ${fmt(med(name, 'rate'))} | ${fmt(med(name, 'p99'), 1)} | ${fmt(med(name, 'cpuPerRequest'), 1)} | ${name.startsWith('sandbox') ? `**${ratio}** (target ≥ 0.5)` : ratio} |`;
  })
  .join('\n')}

"× bare (CPU)" is the bare route's CPU per request over this route's: the share of the floor's rate the route reaches when the server, not the load, is the limit.
`);
}

if (process.argv[2] === '--child') await child();
else await main();
