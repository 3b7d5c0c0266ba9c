/**
 * The client's telemetry (#34) in a real Chromium page with the OpenTelemetry web tracer
 * (WebTracerProvider, registered with its default context manager, an in-memory exporter), the
 * browser entry bundled from the package by name, against the real sandbox behind a proxy that
 * records what reached the server: a storm on a token the service has ended gives two CLIENT
 * spans per call (401, then the replay), one forced provider span, and on the wire each attempt's
 * `traceparent` names its span. The header makes every call a CORS preflighted one: the sandbox
 * must allow it. Without `telemetry`, no header. Set CHANNEL_PRINT_TRACE=1 to print one call's trace.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/testing.js';
import { hasChromium, launchChromium, serveBundledPage } from '../helpers/chromium.js';
import { startRecordingProxy, type RecordingProxy } from '../helpers/recording-proxy.js';

// The page: what a partner's app sets up, plus a processor that tracks every started span so
// that the test can tell that each one ended.
const PAGE = `
import { createClient } from 'channel-sdk';
import { clientTelemetry } from 'channel-sdk/telemetry';
import { InMemorySpanExporter, SimpleSpanProcessor, WebTracerProvider } from '@opentelemetry/sdk-trace-web';
const exporter = new InMemorySpanExporter();
const open = new Set();
const tracking = {
  onStart: (span) => open.add(span.spanContext().spanId),
  onEnd: (span) => open.delete(span.spanContext().spanId),
  forceFlush: async () => {},
  shutdown: async () => {},
};
const provider = new WebTracerProvider({ spanProcessors: [tracking, new SimpleSpanProcessor(exporter)] });
provider.register();
const spans = () =>
  exporter.getFinishedSpans().map((s) => ({
    name: s.name,
    kind: s.kind,
    traceId: s.spanContext().traceId,
    spanId: s.spanContext().spanId,
    parent: s.parentSpanContext && s.parentSpanContext.spanId,
    attributes: s.attributes,
    status: s.status.code,
    events: s.events.map((e) => [e.name, e.attributes]),
  }));
Object.assign(window, { createClient, clientTelemetry, tracer: provider.getTracer('partner-app'), spans, resetSpans: () => exporter.reset(), openSpans: () => [...open] });
`;

interface PageSpan {
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parent?: string;
  attributes: Record<string, string | number | boolean>;
  status: number;
  events: unknown[];
}
interface Client {
  get(path: string): Promise<unknown>;
  fetch(path: string): Promise<Response>;
}
interface PageWindow {
  createClient(options: object): Client;
  clientTelemetry(options: object): object;
  tracer: { startActiveSpan<T>(name: string, fn: (span: { spanContext(): { spanId: string }; end(): void }) => T): T };
  spans(): PageSpan[];
  resetSpans(): void;
  openSpans(): string[];
  issueToken(): Promise<string>;
  client: Client;
  asked: boolean[];
}

const ORDER = '/open/api/v1/sdk/orders/SO20240601001';
const N = 20;
const FETCHES = 4;
const header = (s: PageSpan) => `00-${s.traceId}-${s.spanId}-01`;

describe.runIf(hasChromium)('client telemetry in Chromium with the OpenTelemetry web tracer', () => {
  let sandbox: Sandbox;
  let proxy: RecordingProxy;
  let site: Awaited<ReturnType<typeof serveBundledPage>>;
  let browser: Awaited<ReturnType<typeof launchChromium>>;
  const issued: string[] = [];

  beforeAll(async () => {
    sandbox = await startSandbox();
    proxy = await startRecordingProxy(sandbox.url);
    site = await serveBundledPage(PAGE);
    browser = await launchChromium();
    // The partner's token route, as the page's tokenProvider would call it.
    await browser.page.exposeFunction('issueToken', async () => {
      const token = await sandbox.issueToken('user-42');
      issued.push(token);
      return token;
    });
    await browser.page.goto(site.url);
    await browser.page.waitForFunction(() => typeof (window as unknown as { createClient?: unknown }).createClient === 'function');
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await proxy?.close();
    site?.server.close();
    await sandbox?.close();
  });

  test('a storm after expireTokens(): two CLIENT spans per call (401, replay), one forced provider span, each traceparent on the wire naming its span', async () => {
    const { page } = browser;
    await page.evaluate(
      async ([baseUrl, order]) => {
        const w = window as unknown as PageWindow;
        w.asked = [];
        w.client = w.createClient({
          baseUrl,
          tokenProvider: ({ forceRefresh }: { forceRefresh: boolean }) => (w.asked.push(forceRefresh), w.issueToken()),
          telemetry: w.clientTelemetry({ tracer: w.tracer }),
        });
        await w.client.get(order);
        w.resetSpans();
      },
      [proxy.url, ORDER] as const,
    );
    sandbox.expireTokens();
    const before = proxy.requests.length;

    // N GETs, each under a span of its own caller, and a few client.fetch() calls; each call its own URL.
    const result = await page.evaluate(
      async ([order, n, fetches]) => {
        const w = window as unknown as PageWindow;
        const gets = Array.from({ length: n }, (_, i) =>
          w.tracer.startActiveSpan('page ' + i, async (span) => {
            try {
              await w.client.get(order + '?call=g' + i);
            } finally {
              span.end();
            }
            return span.spanContext().spanId;
          }),
        );
        const raw = Array.from({ length: fetches }, (_, i) =>
          w.tracer.startActiveSpan('fetch ' + i, async (span) => {
            try {
              return { status: (await w.client.fetch(order + '?call=f' + i)).status, caller: span.spanContext().spanId };
            } finally {
              span.end();
            }
          }),
        );
        const fetched = await Promise.all(raw);
        return {
          callers: await Promise.all(gets),
          fetched: fetched.map((f) => f.status),
          fetchCallers: fetched.map((f) => f.caller),
          asked: w.asked,
          spans: w.spans(),
          open: w.openSpans(),
        };
      },
      [ORDER, N, FETCHES] as const,
    );
    expect(result.fetched).toEqual(Array(FETCHES).fill(200));
    // One forced refresh for the whole storm (the first call was the warm-up).
    expect(result.asked).toEqual([false, true]);
    expect(result.open).toEqual([]);

    const attempts = result.spans.filter((s) => s.kind === 2);
    expect(attempts).toHaveLength(2 * (N + FETCHES));
    expect(attempts.every((s) => s.name === 'GET')).toBe(true);
    const providers = result.spans.filter((s) => s.name === 'channel.token_provider');
    expect(providers).toHaveLength(1);
    expect(providers[0].attributes).toMatchObject({ 'channel.force_refresh': true, 'channel.token.reason': 'unauthorized' });
    expect(providers[0].status).not.toBe(2);

    const port = Number(new URL(proxy.url).port);
    const calls = [...Array.from({ length: N }, (_, i) => 'g' + i), ...Array.from({ length: FETCHES }, (_, i) => 'f' + i)];
    for (const call of calls) {
      const url = proxy.url + ORDER + '?call=' + call;
      const mine = attempts.filter((s) => s.attributes['url.full'] === url);
      expect(mine.map((s) => s.attributes['http.response.status_code'])).toEqual([401, 200]);
      expect(mine[0].attributes).toEqual({
        'http.request.method': 'GET',
        'url.full': url,
        'server.address': '127.0.0.1',
        'server.port': port,
        'http.response.status_code': 401,
        'error.type': '401',
      });
      expect(mine[0].status).toBe(2);
      expect(mine[1].attributes).toEqual({
        'http.request.method': 'GET',
        'url.full': url,
        'server.address': '127.0.0.1',
        'server.port': port,
        'http.response.status_code': 200,
        'http.request.resend_count': 1,
        'channel.resend_reason': 'unauthorized',
      });
      expect(mine[1].status).not.toBe(2);
    }
    // Both attempts of a GET are children of its caller's span, the replay too, though it starts
    // after awaits, where the web tracer's default context manager (a stack, no async context)
    // has none: the client takes the context as the call starts. The one provider span is a child
    // of the caller whose 401 forced it.
    result.callers.forEach((caller, i) => {
      const mine = attempts.filter((s) => s.attributes['url.full'] === proxy.url + ORDER + '?call=g' + i);
      expect(mine.map((s) => s.parent)).toEqual([caller, caller]);
    });
    result.fetchCallers.forEach((caller, i) => {
      const mine = attempts.filter((s) => s.attributes['url.full'] === proxy.url + ORDER + '?call=f' + i);
      expect(mine.map((s) => s.parent)).toEqual([caller, caller]);
    });
    expect([...result.callers, ...result.fetchCallers]).toContain(providers[0].parent);

    // The wire: every attempt reached the sandbox with the traceparent of its own span, and the
    // status the server answered is the one on that span.
    const wire = proxy.requests.slice(before).filter((r) => r.method === 'GET');
    expect(wire).toHaveLength(attempts.length);
    const bySpan = new Map(attempts.map((s) => [header(s), s]));
    for (const request of wire) {
      const span = bySpan.get(String(request.headers.traceparent));
      expect(span, `traceparent ${request.headers.traceparent} of ${request.path}`).toBeDefined();
      expect([span?.attributes['url.full'], span?.attributes['http.response.status_code']]).toEqual([proxy.url + request.path, request.status]);
    }
    expect(new Set(wire.map((r) => r.headers.traceparent)).size).toBe(attempts.length);
    // The header makes each call preflighted: the sandbox allowed it (else no GET above had arrived).
    const preflights = proxy.requests.slice(before).filter((r) => r.method === 'OPTIONS');
    expect(preflights.length).toBeGreaterThan(0);
    for (const preflight of preflights) {
      expect(String(preflight.headers['access-control-request-headers'])).toContain('traceparent');
      expect(String(preflight.answer['access-control-allow-headers'])).toContain('traceparent');
    }

    // Nothing secret in a span: no token (nor its signature), no user id.
    const everything = JSON.stringify(result.spans);
    for (const secret of [...issued, ...issued.map((t) => t.split('.')[2]), 'user-42', sandbox.credentials.accessKey]) expect(everything).not.toContain(secret);

    if (process.env.CHANNEL_PRINT_TRACE) {
      const caller = result.callers[0];
      const first = attempts.find((s) => s.parent === caller && s.attributes['http.response.status_code'] === 401) as PageSpan;
      const replay = attempts.find((s) => s.attributes['url.full'] === first.attributes['url.full'] && s !== first) as PageSpan;
      const line = (label: string, s: PageSpan) =>
        `${label} ${s.name} kind=${['INTERNAL', 'SERVER', 'CLIENT'][s.kind] ?? s.kind} trace=${s.traceId} span=${s.spanId} parent=${s.parent ?? '-'}` +
        ` status=${['UNSET', 'OK', 'ERROR'][s.status]}\n    ${JSON.stringify(s.attributes)}`;
      process.stdout.write(
        [
          `One call of the storm (client.get under the caller's span 'page 0', ${caller}):`,
          line('caller:   ', result.spans.find((s) => s.spanId === caller) as PageSpan),
          line('attempt 1:', first),
          line('provider: ', providers[0]),
          line('attempt 2:', replay),
          `on the wire: ${wire
            .filter((r) => r.path.endsWith('call=g0'))
            .map((r) => `${r.status} traceparent=${r.headers.traceparent}`)
            .join('; ')}\n`,
        ].join('\n'),
      );
    }
  });

  test('without telemetry: no traceparent on the wire, no span', async () => {
    const before = proxy.requests.length;
    const spans = await browser.page.evaluate(
      async ([baseUrl, order]) => {
        const w = window as unknown as PageWindow;
        w.resetSpans();
        const plain = w.createClient({ baseUrl, tokenProvider: () => w.issueToken() });
        await plain.get(order + '?call=plain');
        await plain.fetch(order + '?call=plain-fetch');
        return w.spans();
      },
      [proxy.url, ORDER] as const,
    );
    expect(spans).toEqual([]);
    const wire = proxy.requests.slice(before);
    expect(wire.filter((r) => r.method === 'GET').map((r) => [r.path, r.status])).toEqual([
      [ORDER + '?call=plain', 200],
      [ORDER + '?call=plain-fetch', 200],
    ]);
    expect(wire.filter((r) => 'traceparent' in r.headers)).toEqual([]);
  });
});
