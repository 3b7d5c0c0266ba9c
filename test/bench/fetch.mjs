// client.fetch against bare fetch, ofetch and axios (issue #32: at most 1.10x bare fetch,
// sequential and at concurrency 64), and those libraries over client.fetch, in one process
// against one local node:http server. The machine may be loaded: every figure is taken in
// rounds that alternate the contenders, each round gives a ratio, and the table shows the
// median ratio with the spread of the rounds (min-max), so the noise is in the table.
// Run by test/bench/run.mjs in a fresh process; `npm run bench:fetch [-- --quick] [--rounds N]`.
import { createServer } from 'node:http';
import axios from 'axios';
import { createFetch, ofetch } from 'ofetch';
import { createClient } from 'channel-sdk';
import { alternatingRounds, fetchWithSignalAndTimer, median, pairedRatio, pool, seededShuffle } from './rounds.mjs';

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const rounds = argv.includes('--rounds') ? Number(argv[argv.indexOf('--rounds') + 1]) : quick ? 3 : 9;
const sequentialPerRound = quick ? 300 : 2000;
const concurrentPerRound = quick ? 1000 : 4000;

// ---------------------------------------------------------------- server
const b64 = (v) => Buffer.from(JSON.stringify(v)).toString('base64url');
const valid = new Set();
let issued = 0;
function issue() {
  const iat = Math.floor(Date.now() / 1000);
  const token = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ sub: 'bench', iat, exp: iat + 900, jti: ++issued })}.sig${issued}`;
  valid.add(token);
  return token;
}
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const auth = req.headers.authorization;
    if (!(auth && valid.has(auth.slice(7)))) {
      const body = '{"code":401,"message":"invalid or expired token"}';
      res.writeHead(401, { 'content-type': 'application/json', 'content-length': body.length }).end(body);
      return;
    }
    const body = JSON.stringify({ code: 0, data: { path: req.url } });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
  });
});
server.keepAliveTimeout = 60_000;
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${server.address().port}`;

// ---------------------------------------------------------------- contenders: get(path) -> data
const token = issue();
const headers = { authorization: `Bearer ${token}` };
const client = createClient({ baseUrl: base, tokenProvider: () => issue() });
await client.getToken();
const overClient = createFetch({ fetch: client.fetch });
const axiosPlain = axios.create({ baseURL: base, headers });
const axiosFetchPlain = axios.create({ baseURL: base, headers, adapter: 'fetch' });
const axiosOverClient = axios.create({ baseURL: base, adapter: 'fetch', env: { fetch: client.fetch } });
const contenders = {
  'bare fetch': (p) =>
    fetch(base + p, { headers })
      .then((r) => r.json())
      .then((b) => b.data),
  // client.fetch pays this too; the rest of its ratio is its own.
  'bare fetch with a signal and a timer': (p) =>
    fetchWithSignalAndTimer(base + p, headers)
      .then((r) => r.json())
      .then((b) => b.data),
  'channel-sdk client.fetch': (p) =>
    client
      .fetch(p)
      .then((r) => r.json())
      .then((b) => b.data),
  'ofetch (token set by hand)': (p) => ofetch(base + p, { headers }).then((b) => b.data),
  'ofetch over client.fetch': (p) => overClient(base + p).then((b) => b.data),
  'axios (token set by hand; http adapter)': (p) => axiosPlain.get(p).then((r) => r.data.data),
  'axios fetch adapter (token set by hand)': (p) => axiosFetchPlain.get(p).then((r) => r.data.data),
  'axios fetch adapter over client.fetch': (p) => axiosOverClient.get(p).then((r) => r.data.data),
  'channel-sdk client.get (ky)': (p) => client.get(p),
};
const names = Object.keys(contenders);

const shuffle = seededShuffle(20261126);

// Warm-up: JIT, keep-alive sockets; and every contender answers what bare fetch answers.
for (const name of names) {
  await pool(quick ? 200 : 1000, 16, (i) => contenders[name](`/warm/${i}`));
  const data = await contenders[name]('/check');
  if (data.path !== '/check') throw new Error(`${name} answered ${JSON.stringify(data)}`);
}

// Per round: sequential latency (contenders interleaved request by request, in a fresh random
// order each time, median per contender) and throughput at concurrency 64 (contenders alternating
// in batches of 250, in a fresh random order each time; the ratio is the median of each batch
// against bare fetch's batch of the same turn).
const { seq, conc, batches } = await alternatingRounds(contenders, { rounds, sequential: sequentialPerRound, concurrent: concurrentPerRound, shuffle });
const chunks = batches['bare fetch'][0].length;

const fmt = (n, d = 2) => n.toFixed(d);
const out = [];
for (const [title, per, ratios] of [
  [
    `Sequential GETs (${sequentialPerRound.toLocaleString('en')} per contender per round, interleaved request by request; median latency)`,
    seq,
    (name) => seq[name].map((us, i) => us / seq['bare fetch'][i]),
  ],
  [
    `GETs at concurrency 64 (${concurrentPerRound.toLocaleString('en')} per contender per round in ${chunks} batches, contenders alternating batch by batch; µs: median batch; ×: median of each batch against bare fetch's of the same turn)`,
    conc,
    (name) => pairedRatio(batches, name, 'bare fetch'),
  ],
]) {
  out.push(
    `#### client.fetch: ${title}, ${rounds} rounds`,
    '',
    '| contender | µs / request (median of rounds) | × bare fetch (median of rounds) | × bare fetch, rounds min–max |',
    '|---|---|---|---|',
    ...names.map((name) => {
      const r = ratios(name);
      return `| ${name} | ${fmt(median(per[name]), 1)} | ${fmt(median(r), 3)} | ${fmt(Math.min(...r))}–${fmt(Math.max(...r))} |`;
    }),
    '',
  );
}
out.push(
  `Node ${process.version}; ${rounds} rounds; bare fetch's own spread across rounds: sequential ${fmt(Math.min(...seq['bare fetch']), 1)}–${fmt(Math.max(...seq['bare fetch']), 1)} µs, concurrency 64 ${fmt(Math.min(...conc['bare fetch']), 1)}–${fmt(Math.max(...conc['bare fetch']), 1)} µs.`,
);
console.log(out.join('\n'));
server.closeAllConnections();
server.close();
