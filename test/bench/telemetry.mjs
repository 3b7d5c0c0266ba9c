// The steady GET with telemetry off, on with a no-op tracer (the OpenTelemetry API with no SDK
// registered: what a library that "supports tracing" costs an app that does not trace), and on
// with the real SDK (tracer + meter, spans handed to an exporter that drops them), against bare
// fetch, in one process against one local node:http server (issue #34). As in fetch.mjs, every
// figure is taken in rounds that alternate the contenders; the table shows the median ratio and
// the spread of the rounds. Run by test/bench/run.mjs; `npm run bench:telemetry [-- --quick]`.
import { createServer } from 'node:http';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { createClient } from 'channel-sdk';
import { clientTelemetry } from 'channel-sdk/telemetry';
import { alternatingRounds, median, pairedRatio, pool, seededShuffle } from './rounds.mjs';

const argv = process.argv.slice(2);
const quick = argv.includes('--quick');
const rounds = argv.includes('--rounds') ? Number(argv[argv.indexOf('--rounds') + 1]) : quick ? 3 : 9;
const sequentialPerRound = quick ? 300 : 2000;
const concurrentPerRound = quick ? 1000 : 4000;

const b64 = (v) => Buffer.from(JSON.stringify(v)).toString('base64url');
let issued = 0;
function issue() {
  const iat = Math.floor(Date.now() / 1000);
  return `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ sub: 'bench', iat, exp: iat + 900, jti: ++issued })}.sig${issued}`;
}
let traced = 0;
const server = createServer((req, res) => {
  if (req.headers.traceparent) traced++;
  const body = JSON.stringify({ code: 0, data: { path: req.url } });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
});
server.keepAliveTimeout = 60_000;
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${server.address().port}`;

// The SDK as an app would set it up: AsyncLocalStorage context, a batch processor, a meter
// reader; the exporter drops the spans (what is measured is the SDK's cost, not an exporter's).
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
let exported = 0;
const exporter = { export: (spans, done) => ((exported += spans.length), done({ code: 0 })), shutdown: async () => {} };
const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter, { maxQueueSize: 100_000 })] });
class Reader extends MetricReader {
  async onShutdown() {}
  async onForceFlush() {}
}
const reader = new Reader();
const meters = new MeterProvider({ readers: [reader] });

const headers = { authorization: `Bearer ${issue()}` };
const clients = {
  off: createClient({ baseUrl: base, tokenProvider: () => issue() }),
  noop: createClient({ baseUrl: base, tokenProvider: () => issue(), telemetry: clientTelemetry({ tracer: trace.getTracer('channel-sdk') }) }),
  sdk: createClient({
    baseUrl: base,
    tokenProvider: () => issue(),
    telemetry: clientTelemetry({ tracer: provider.getTracer('channel-sdk'), meter: meters.getMeter('channel-sdk') }),
  }),
};
for (const c of Object.values(clients)) await c.getToken();
const contenders = {
  'bare fetch': (p) =>
    fetch(base + p, { headers })
      .then((r) => r.json())
      .then((b) => b.data),
  'client.get, no telemetry': (p) => clients.off.get(p),
  'client.get, no-op tracer (API, no SDK)': (p) => clients.noop.get(p),
  'client.get, OpenTelemetry SDK (tracer + meter)': (p) => clients.sdk.get(p),
};
const names = Object.keys(contenders);
const shuffle = seededShuffle(20261127);

for (const name of names) await pool(quick ? 200 : 1000, 16, (i) => contenders[name](`/warm/${i}`));
const { seq, conc, batches } = await alternatingRounds(contenders, { rounds, sequential: sequentialPerRound, concurrent: concurrentPerRound, shuffle });
const chunks = batches['bare fetch'][0].length;
await provider.forceFlush();

const fmt = (n, d = 2) => n.toFixed(d);
const off = 'client.get, no telemetry';
const out = [];
for (const [title, per, ratio] of [
  [
    `Sequential GETs (${sequentialPerRound.toLocaleString('en')} per contender per round, interleaved; median latency)`,
    seq,
    (name, to) => seq[name].map((us, i) => us / seq[to][i]),
  ],
  [
    `GETs at concurrency 64 (${concurrentPerRound.toLocaleString('en')} per contender per round in ${chunks} batches, contenders alternating batch by batch; µs: median batch; ×: median of each batch against the other's of the same turn)`,
    conc,
    (name, to) => pairedRatio(batches, name, to),
  ],
]) {
  out.push(
    `#### Telemetry: ${title}, ${rounds} rounds`,
    '',
    '| contender | µs / request | × no telemetry (median; rounds min–max) | × bare fetch (median) |',
    '|---|---|---|---|',
    ...names.map((name) => {
      const r = ratio(name, off);
      return `| ${name} | ${fmt(median(per[name]), 1)} | ${fmt(median(r))} (${fmt(Math.min(...r))}–${fmt(Math.max(...r))}) | ${fmt(median(ratio(name, 'bare fetch')))} |`;
    }),
    '',
  );
}
const expected = (sequentialPerRound + concurrentPerRound) * rounds + (quick ? 200 : 1000);
out.push(
  `Node ${process.version}; ${rounds} rounds; spans exported by the SDK client: ${exported.toLocaleString('en')} (one per request, ${expected.toLocaleString('en')}, and its one provider call); requests that carried a traceparent: ${traced.toLocaleString('en')} (the SDK client's only: no header without telemetry, none from the no-op tracer with nothing active).`,
);
if (exported !== expected + 1 || traced !== expected) throw new Error(`expected ${expected} spans and traceparent headers, got ${exported} and ${traced}`);
console.log(out.join('\n'));
server.closeAllConnections();
server.close();
