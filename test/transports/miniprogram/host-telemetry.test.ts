/**
 * The mini-program entry's telemetry (#34) with the real OpenTelemetry SDK as a mini-program can
 * run it: a BasicTracerProvider with no context manager (no AsyncLocalStorage there, so every
 * attempt is a root span) and a MeterProvider, over the emulated hosts (real HTTP) to the real
 * sandbox behind a proxy that records what reached it. Storms after `expireTokens()` through
 * client.get, client.hostRequest and the files: one span per attempt, each attempt's traceparent
 * on the wire naming its span, one forced provider span per storm, the counters; the SDK's queue
 * (9 of the host's 10 slots) neither loses nor doubles a span, also when clearToken() fences
 * queued attempts that never leave.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { context } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { MeterProvider, type DataPoint, type Histogram } from '@opentelemetry/sdk-metrics';
import { TestMetricReader } from '../../helpers/metric-reader.js';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { createClient, type DownloadResult, type HostRequestResult } from '../../../src/miniprogram.js';
import { clientTelemetry } from '../../../src/telemetry.js';
import { SANDBOX_PATHS, startSandbox, type Sandbox, type SandboxPhoto } from '../../../src/testing.js';
import { createHost, type HostKind } from '../../helpers/hosts.js';
import { startRecordingProxy, type RecordedRequest, type RecordingProxy } from '../../helpers/recording-proxy.js';

const ORDER = '/open/api/v1/sdk/orders/SO20240601001';
const N = 20;
const kinds: HostKind[] = ['wx', 'my', 'tt'];
const dir = mkdtempSync(join(tmpdir(), 'channel-sdk-telemetry-'));
let sandbox: Sandbox;
let proxy: RecordingProxy;

beforeAll(async () => {
  // A mini-program has no context manager: the API's default (none) is what the SDK meets there.
  context.disable();
  sandbox = await startSandbox();
  proxy = await startRecordingProxy(sandbox.url);
});
afterAll(async () => {
  await proxy?.close();
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});
afterEach(() => {
  for (const kind of kinds) delete (globalThis as Record<string, unknown>)[kind];
});

/** A client on `kind`'s emulated host, traced and metered by the real SDK; every started span is tracked until it ends. */
function setup(kind: HostKind, wrap?: (request: (options: never) => unknown) => (options: never) => unknown) {
  const exporter = new InMemorySpanExporter();
  const open = new Set<string>();
  const tracking: SpanProcessor = {
    onStart: (span) => void open.add(span.spanContext().spanId),
    onEnd: (span) => void open.delete(span.spanContext().spanId),
    forceFlush: async () => {},
    shutdown: async () => {},
  };
  const tracer = new BasicTracerProvider({ spanProcessors: [tracking, new SimpleSpanProcessor(exporter)] }).getTracer('mini-program');
  const reader = new TestMetricReader();
  const meter = new MeterProvider({ readers: [reader] }).getMeter('mini-program');
  const host = createHost(kind);
  // Exposed as its global, as the runtime does, so that the entry recognises the host.
  (globalThis as Record<string, unknown>)[kind] = host;
  const asked: boolean[] = [];
  const issued: string[] = [];
  const client = createClient({
    baseUrl: proxy.url,
    tokenProvider: async ({ forceRefresh }) => {
      asked.push(forceRefresh);
      const token = await sandbox.issueToken('user-42');
      issued.push(token);
      return token;
    },
    request: wrap ? wrap(host.request as never) : host.request,
    uploadFile: host.uploadFile,
    downloadFile: host.downloadFile,
    telemetry: clientTelemetry({ tracer, meter }),
  });
  async function points(name: string): Promise<Array<DataPoint<number | Histogram>>> {
    const { resourceMetrics } = await reader.collect();
    const metric = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === name);
    return (metric ? metric.dataPoints : []) as Array<DataPoint<number | Histogram>>;
  }
  /** Runs `storm` on a token the service has just ended; returns its spans and the requests that reached the sandbox. */
  async function afterExpiry(storm: () => Promise<unknown>): Promise<{ attempts: ReadableSpan[]; providers: ReadableSpan[]; wire: RecordedRequest[] }> {
    sandbox.expireTokens();
    exporter.reset();
    const before = proxy.requests.length;
    await storm();
    const spans = exporter.getFinishedSpans();
    return {
      attempts: spans.filter((s) => s.kind === 2),
      providers: spans.filter((s) => s.name === 'channel.token_provider'),
      wire: proxy.requests.slice(before),
    };
  }
  return { host, client, asked, issued, open, exporter, reader, points, afterExpiry };
}

const header = (s: ReadableSpan) => `00-${s.spanContext().traceId}-${s.spanContext().spanId}-01`;

/**
 * The spans of a storm against the wire: one span per request that reached the sandbox, its
 * traceparent naming it, with the status the sandbox answered; per call a 401 and its replay or,
 * for a call that waited in the queue past the refresh, one 200; one forced provider span; no
 * parent anywhere (no context manager). Returns the number of 401s.
 */
function checkStorm({ attempts, providers, wire }: Awaited<ReturnType<ReturnType<typeof setup>['afterExpiry']>>, method: string, paths: string[]): number {
  expect(wire.map((r) => r.method)).toEqual(wire.map(() => method));
  expect(attempts).toHaveLength(wire.length);
  const bySpan = new Map(attempts.map((s) => [header(s), s]));
  expect(bySpan.size).toBe(attempts.length);
  for (const request of wire) {
    const span = bySpan.get(String(request.headers.traceparent));
    expect(span, `traceparent ${request.headers.traceparent} of ${request.path}`).toBeDefined();
    expect([span?.name, span?.attributes['url.full'], span?.attributes['http.response.status_code']]).toEqual([
      method,
      proxy.url + request.path,
      request.status,
    ]);
    bySpan.delete(String(request.headers.traceparent));
  }
  for (const path of paths) {
    const mine = attempts.filter((s) => s.attributes['url.full'] === proxy.url + path);
    // [status, error.type, resend_count, resend_reason, span status] of each attempt.
    const shape = mine.map((s) => [
      s.attributes['http.response.status_code'],
      s.attributes['error.type'],
      s.attributes['http.request.resend_count'],
      s.attributes['channel.resend_reason'],
      s.status.code,
    ]);
    const replayed = [
      [401, '401', undefined, undefined, 2],
      [200, undefined, 1, 'unauthorized', 0],
    ];
    expect([[[200, undefined, undefined, undefined, 0]], replayed], `${path}`).toContainEqual(shape);
  }
  expect(providers.map((s) => s.attributes)).toEqual([{ 'channel.force_refresh': true, 'channel.token.reason': 'unauthorized' }]);
  expect([...attempts, ...providers].filter((s) => s.parentSpanContext)).toEqual([]);
  return wire.filter((r) => r.status === 401).length;
}

describe.each(kinds)('mini-program telemetry on %s', (kind) => {
  test(`storms through client.get, client.hostRequest and the files: a span per attempt named on the wire, one provider span each, the counters`, async () => {
    const { host, client, asked, issued, open, exporter, reader, points, afterExpiry } = setup(kind);
    await client.get(ORDER);
    let replays = 0;

    const gets = Array.from({ length: N }, (_, i) => ORDER + '?call=g' + i);
    const viaGet = await afterExpiry(() => Promise.all(gets.map((path) => client.get(path))));
    replays += checkStorm(viaGet, 'GET', gets);
    // The first wave (9 of the host's 10 slots) met the 401; whoever waited in the queue past the refresh did not.
    expect(viaGet.wire.filter((r) => r.status === 401).length).toBeGreaterThanOrEqual(9);
    expect((await points('channel.client.unauthorized_replays'))[0].value).toBe(replays);

    const hosted = Array.from({ length: N }, (_, i) => ORDER + '?call=h' + i);
    const viaHost = await afterExpiry(async () => {
      const results = await Promise.all(hosted.map((url) => client.hostRequest({ url }) as Promise<HostRequestResult>));
      expect(results.map((r) => r.statusCode)).toEqual(hosted.map(() => 200));
    });
    replays += checkStorm(viaHost, 'GET', hosted);

    const photo = join(dir, kind + '-photo.jpg');
    writeFileSync(photo, Buffer.alloc(70_000, 7));
    let saved: SandboxPhoto | undefined;
    const upload = await afterExpiry(async () => {
      saved = (await client.upload(SANDBOX_PATHS.photos, {
        filePath: photo,
        name: 'file',
        hostOptions: kind === 'my' ? { fileType: 'image' } : {},
      })) as SandboxPhoto;
    });
    replays += checkStorm(upload, 'POST', [SANDBOX_PATHS.photos]);
    expect(upload.wire.map((r) => r.status)).toEqual([401, 200]);
    const download = await afterExpiry(async () => {
      const file = (await client.download(saved!.url)) as DownloadResult;
      expect(file.statusCode).toBe(200);
    });
    replays += checkStorm(download, 'GET', [new URL(saved!.url).pathname]);
    expect(download.wire.map((r) => r.status)).toEqual([401, 200]);

    // Every span started has ended; the host's limit was kept.
    expect([...open]).toEqual([]);
    expect(host.maxSeen).toBeLessThanOrEqual(10);
    // One initial provider call, one forced per storm; each 401 replayed once.
    expect(asked).toEqual([false, true, true, true, true]);
    const refreshes = await points('channel.client.token.refreshes');
    expect(refreshes.map((p) => [p.attributes['channel.token.reason'], p.attributes['channel.force_refresh'], p.value])).toEqual([
      ['initial', false, 1],
      ['unauthorized', true, 4],
    ]);
    expect((await points('channel.client.unauthorized_replays'))[0].value).toBe(replays);
    const durations = await points('channel.client.token_provider.duration');
    expect(durations.reduce((n, p) => n + (p.value as Histogram).count, 0)).toBe(5);

    // Nothing secret in a span or a metric: no token (nor its signature), no user id, no key.
    exporter.reset();
    const everything = JSON.stringify([
      [viaGet, viaHost, upload, download].flatMap((r) => [...r.attempts, ...r.providers].map((s) => [s.name, s.attributes, s.events])),
      await reader.collect(),
    ]);
    for (const secret of [...issued, ...issued.map((t) => t.split('.')[2]), 'user-42', sandbox.credentials.accessKey, sandbox.credentials.secretKey])
      expect(everything).not.toContain(secret);
  });
});

describe('the SDK queue on WeChat (10 at once) and clearToken()', () => {
  test('clearToken() with 9 attempts on the wire and 11 queued: every attempt span ends ABORTED, the queued never leave, each sent one carries its own span', async () => {
    const { host, client, open, exporter } = setup('wx');
    await client.get(ORDER);
    exporter.reset();
    const before = proxy.requests.length;
    const release = proxy.hold();
    const calls = Array.from({ length: N }, (_, i) =>
      client.get(ORDER + '?call=q' + i).then(
        () => 'ok',
        (e: { code: string }) => e.code,
      ),
    );
    // The SDK's requests take 9 of the host's 10 slots: 9 reach the server and wait there.
    await proxy.arrived(before + 9);
    client.clearToken();
    expect(await Promise.all(calls)).toEqual(Array(N).fill('ABORTED'));
    release();
    const attempts = exporter.getFinishedSpans().filter((s) => s.kind === 2);
    expect(attempts.map((s) => s.attributes['error.type'])).toEqual(Array(N).fill('ABORTED'));
    expect([...open]).toEqual([]);
    const wire = proxy.requests.slice(before);
    expect(wire).toHaveLength(9);
    expect(host.aborted).toBe(9);
    const names = new Set(attempts.map(header));
    expect(new Set(wire.map((r) => String(r.headers.traceparent))).size).toBe(9);
    expect(wire.filter((r) => !names.has(String(r.headers.traceparent)))).toEqual([]);
  });
});
