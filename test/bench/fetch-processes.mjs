// client.fetch at concurrency 64 across fresh processes: each of `--processes` child processes
// (default 12) runs its own local node:http server and `--rounds` rounds (default 16) of batches
// of 500 GETs at concurrency 64, contenders alternating batch by batch, and reports for each
// contender the median of its batches against bare fetch's batch of the same turn; this script
// prints the mean of those per-process medians with its standard error.
// Why: on the 2 shared cores here, a process's JIT and heap state biases all of its rounds alike,
// so one process's median (bench:fetch's figure) moves ±0.05 from run to run whatever its number
// of rounds, where the mean over 12 processes is known to about ±0.02. Judge a change by this, not
// by one bench:fetch run. `npm run bench:fetch:processes [-- --processes N] [--rounds N]
// [--dist path/to/index.js ...] [--libraries]`: each --dist adds a client of that build (a copy of
// dist/ with a change) as a contender, so that two builds are compared in the same processes;
// --libraries adds ofetch and axios's fetch adapter over the first client, as in bench:fetch
// (client.fetch's own ratio rises with them in the process: 1.06x alone, 1.11-1.13x with them).
// To give the libraries another build, run the script from a folder whose dist/ is that build.
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { fetchWithSignalAndTimer, median, pool } from './rounds.mjs';

const { argv } = process;
const option = (name, fallback) => (argv.includes(name) ? Number(argv[argv.indexOf(name) + 1]) : fallback);
const dists = argv.flatMap((a, i) => (argv[i - 1] === '--dist' ? [resolve(a)] : []));

if (!argv.includes('--child')) {
  const processes = option('--processes', 12);
  const rounds = option('--rounds', 16);
  const runs = [];
  for (let p = 0; p < processes; p++) {
    const out = execFileSync(
      process.execPath,
      [
        fileURLToPath(import.meta.url),
        '--child',
        '--rounds',
        String(rounds),
        ...dists.flatMap((d) => ['--dist', d]),
        ...argv.filter((a) => a === '--libraries'),
      ],
      {
        encoding: 'utf8',
      },
    );
    runs.push(JSON.parse(out));
    process.stderr.write(`process ${p + 1}/${processes} done\n`);
  }
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const se = (xs) => {
    const m = mean(xs);
    return Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1) / xs.length);
  };
  console.log(`#### client.fetch at concurrency 64 over ${processes} processes (${rounds} rounds of 500 GETs per contender each), Node ${process.version}\n`);
  console.log('| contender | × bare fetch: mean of the processes | ± standard error | process medians min–max |');
  console.log('|---|---|---|---|');
  for (const name of Object.keys(runs[0])) {
    const xs = runs.map((r) => r[name]);
    console.log(`| ${name} | ${mean(xs).toFixed(3)} | ${se(xs).toFixed(3)} | ${Math.min(...xs).toFixed(3)}–${Math.max(...xs).toFixed(3)} |`);
  }
} else {
  const rounds = option('--rounds', 16);
  const b64 = (v) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const iat = Math.floor(Date.now() / 1000);
  const token = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ sub: 'bench', iat, exp: iat + 900 })}.sig`;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const body = JSON.stringify({ code: 0, data: { path: req.url } });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${server.address().port}`;
  const headers = { authorization: `Bearer ${token}` };
  const clientOf = async (dist) => {
    const { createClient } = await import(pathToFileURL(dist).href);
    const client = createClient({ baseUrl: base, tokenProvider: () => token });
    await client.getToken();
    return client;
  };
  const client = await clientOf(resolve('dist/index.js'));
  const contenders = {
    'bare fetch': (p) => fetch(base + p, { headers }),
    'bare fetch with a signal and a timer': (p) => fetchWithSignalAndTimer(base + p, headers),
    'channel-sdk client.fetch': (p) => client.fetch(p),
  };
  for (const dist of dists) {
    const other = await clientOf(dist);
    contenders[`client.fetch of ${dist}`] = (p) => other.fetch(p);
  }
  if (argv.includes('--libraries')) {
    // bench:fetch's libraries over the same client: they call client.fetch with their own arguments (a URL and init, a Request).
    const { createFetch } = await import('ofetch');
    const { default: axios } = await import('axios');
    const overClient = createFetch({ fetch: client.fetch });
    const axiosOverClient = axios.create({ baseURL: base, adapter: 'fetch', env: { fetch: client.fetch } });
    contenders['ofetch over client.fetch'] = (p) => overClient(base + p).then((data) => ({ json: () => data }));
    contenders['axios fetch adapter over client.fetch'] = (p) => axiosOverClient.get(p).then((r) => ({ json: () => r.data }));
  }
  const names = Object.keys(contenders);
  const get = (name, p) => contenders[name](p).then((r) => r.json());
  for (const name of names) await pool(2000, 64, (i) => get(name, `/warm/${i}`));
  const ratios = Object.fromEntries(names.map((n) => [n, []]));
  for (let round = 0; round < rounds; round++) {
    const took = {};
    // Each contender once before and once after the others, round by round.
    for (const name of round % 2 ? names : names.toReversed()) {
      const t0 = performance.now();
      await pool(500, 64, (i) => get(name, `/c/${i}`));
      took[name] = performance.now() - t0;
    }
    for (const name of names) ratios[name].push(took[name] / took['bare fetch']);
  }
  server.closeAllConnections();
  server.close();
  console.log(JSON.stringify(Object.fromEntries(names.map((n) => [n, median(ratios[n])]))));
}
