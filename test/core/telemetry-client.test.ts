// @vitest-environment node
/**
 * The client's telemetry with the real OpenTelemetry SDK (BasicTracerProvider, in-memory
 * exporter, MeterProvider, AsyncLocalStorage context) against the real sandbox: a span per
 * attempt named by its traceparent, one span per provider call, the counters, nothing secret,
 * and nothing at all without the option.
 */
import { context, trace, type Span } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { MeterProvider, type DataPoint, type Histogram } from '@opentelemetry/sdk-metrics';
import { TestMetricReader } from '../helpers/metric-reader.js';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { ConfigError, createClient } from '../../src/index.js';
import { clientTelemetry } from '../../src/telemetry.js';
import { createTokenExchange } from '../../src/server-node.js';
import { startSandbox, type Sandbox } from '../../src/testing.js';

const ORDER = '/open/api/v1/sdk/orders/SO20240601001';
let sandbox: Sandbox;
let exporter: InMemorySpanExporter;
let tracer: ReturnType<BasicTracerProvider['getTracer']>;
let reader: TestMetricReader;
let meter: ReturnType<MeterProvider['getMeter']>;
const open = new Set<string>();
const contextManager = new AsyncLocalStorageContextManager();

beforeAll(async () => {
  sandbox = await startSandbox();
  context.setGlobalContextManager(contextManager.enable());
});
afterAll(async () => {
  context.disable();
  await sandbox?.close();
});
beforeEach(() => {
  exporter = new InMemorySpanExporter();
  // Every span started must end: a span left open is a leak in a long-lived page.
  const tracking: SpanProcessor = {
    onStart: (span) => void open.add(span.spanContext().spanId),
    onEnd: (span) => void open.delete(span.spanContext().spanId),
    forceFlush: async () => {},
    shutdown: async () => {},
  };
  tracer = new BasicTracerProvider({ spanProcessors: [tracking, new SimpleSpanProcessor(exporter)] }).getTracer('channel-sdk');
  reader = new TestMetricReader();
  meter = new MeterProvider({ readers: [reader] }).getMeter('channel-sdk');
  open.clear();
});
afterEach(() => {
  // eslint-disable-next-line vitest/no-standalone-expect -- every test's spans must all have ended
  expect([...open]).toEqual([]);
});

/** A client on the sandbox whose provider is a real exchange; every request's headers are kept. */
function setup(extra: Record<string, unknown> = {}) {
  const exchange = createTokenExchange({ baseUrl: sandbox.url, ...sandbox.credentials });
  const tokens: string[] = [];
  const sent: Array<{ url: string; headers: Headers }> = [];
  const client = createClient({
    baseUrl: sandbox.url,
    tokenProvider: async ({ forceRefresh }) => {
      const { accessToken: token } = await exchange.getToken('user-42', { forceRefresh });
      tokens.push(token);
      return token;
    },
    fetch: (input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(input, init);
      sent.push({ url: request.url, headers: request.headers });
      return fetch(request);
    },
    telemetry: clientTelemetry({ tracer, meter }),
    ...extra,
  });
  return { client, tokens, sent };
}

const spans = () => exporter.getFinishedSpans();
const named = (name: string) => spans().filter((s) => s.name === name);
const ids = (s: ReadableSpan) => `00-${s.spanContext().traceId}-${s.spanContext().spanId}-01`;

async function points(name: string): Promise<Array<DataPoint<number | Histogram>>> {
  const { resourceMetrics } = await reader.collect();
  const metric = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === name);
  return (metric ? metric.dataPoints : []) as Array<DataPoint<number | Histogram>>;
}

describe('client telemetry with the OpenTelemetry SDK', () => {
  test('a storm after the service ended the token: a span per attempt, one forced provider call, each attempt named by its traceparent', async () => {
    const { client, tokens, sent } = setup();
    await client.get(ORDER);
    sandbox.expireTokens();
    exporter.reset();
    sent.length = 0;
    const N = 20;
    const parents: Span[] = [];
    await Promise.all(
      Array.from({ length: N }, (_, i) =>
        tracer.startActiveSpan('page ' + i, async (page) => {
          parents.push(page);
          await client.get(ORDER);
          page.end();
        }),
      ),
    );
    const attempts = named('GET');
    expect(attempts).toHaveLength(2 * N);
    const providers = named('channel.token_provider');
    expect(providers).toHaveLength(1);
    expect(providers[0].attributes).toMatchObject({ 'channel.force_refresh': true, 'channel.token.reason': 'unauthorized' });
    // Each call: a 401 and its replay, both children of the caller's span.
    for (const page of parents) {
      const mine = attempts.filter((s) => s.parentSpanContext?.spanId === page.spanContext().spanId);
      expect(mine.map((s) => s.attributes['http.response.status_code'])).toEqual([401, 200]);
      expect(mine[0].attributes['error.type']).toBe('401');
      expect(mine[0].status.code).toBe(2);
      expect(mine[1].attributes).toMatchObject({ 'http.request.resend_count': 1, 'channel.resend_reason': 'unauthorized' });
      expect(mine[0].attributes['http.request.resend_count']).toBeUndefined();
      expect(mine.every((s) => s.spanContext().traceId === page.spanContext().traceId)).toBe(true);
    }
    expect(attempts[0].kind).toBe(2);
    expect(attempts[0].attributes).toMatchObject({
      'http.request.method': 'GET',
      'url.full': sandbox.url + ORDER,
      'server.address': '127.0.0.1',
      'server.port': Number(new URL(sandbox.url).port),
    });
    // The header of each attempt names that attempt's span.
    expect(sent.map((r) => r.headers.get('traceparent')).toSorted()).toEqual(attempts.map(ids).toSorted());

    const refreshes = await points('channel.client.token.refreshes');
    expect(refreshes.map((p) => [p.attributes['channel.token.reason'], p.value])).toEqual([
      ['initial', 1],
      ['unauthorized', 1],
    ]);
    expect((await points('channel.client.unauthorized_replays'))[0].value).toBe(N);
    const durations = await points('channel.client.token_provider.duration');
    expect(durations.reduce((n, p) => n + (p.value as Histogram).count, 0)).toBe(2);

    // Nothing secret: no token, access key or secret key, no user id.
    const everything = JSON.stringify([spans().map((s) => [s.name, s.attributes, s.events]), await reader.collect()]);
    for (const secret of [...tokens, ...tokens.map((t) => t.split('.')[2]), sandbox.credentials.secretKey, sandbox.credentials.accessKey, 'user-42'])
      expect(everything).not.toContain(secret);
  });

  test('a transient failure: the retry is a span with resend_count and its reason; the failed attempt carries error.type', async () => {
    const { client } = setup({ retry: { limit: 1, delay: () => 0 } });
    sandbox.failNext(1, { status: 503, retryAfterSeconds: 0 });
    await client.get(ORDER);
    const attempts = named('GET');
    expect(attempts.map((s) => [s.attributes['http.response.status_code'], s.attributes['error.type'], s.attributes['channel.resend_reason']])).toEqual([
      [503, '503', undefined],
      [200, undefined, 'status'],
    ]);
  });

  test('a network failure and a clearToken() mid-flight end their spans with error.type', async () => {
    const { client } = setup({ baseUrl: 'http://127.0.0.1:9', retry: 0 });
    await expect(client.get('/x')).rejects.toMatchObject({ code: 'NETWORK_ERROR' });
    expect(named('GET').map((s) => s.attributes['error.type'])).toEqual(['NETWORK_ERROR']);

    exporter.reset();
    const slow = setup({
      fetch: (_: RequestInfo | URL, init?: RequestInit) =>
        new Promise<Response>((_resolve, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal!.reason))),
    });
    const pending = slow.client.get(ORDER);
    await new Promise((r) => slow.client.on('request', () => setTimeout(r, 20)));
    slow.client.clearToken();
    await expect(pending).rejects.toMatchObject({ code: 'ABORTED' });
    expect(named('GET').map((s) => s.attributes['error.type'])).toEqual(['ABORTED']);
  });

  test('a failing provider: its span says so, with the timeout told apart', async () => {
    const failing = createClient({
      baseUrl: sandbox.url,
      tokenProvider: async () => {
        throw new Error('backend down: secret-detail');
      },
      telemetry: clientTelemetry({ tracer, meter }),
    });
    await expect(failing.get(ORDER)).rejects.toMatchObject({ code: 'TOKEN_PROVIDER_ERROR' });
    const hung = createClient({
      baseUrl: sandbox.url,
      tokenProvider: () => new Promise<string>(() => {}),
      tokenTimeout: 50,
      telemetry: clientTelemetry({ tracer, meter }),
    });
    await expect(hung.get(ORDER)).rejects.toMatchObject({ code: 'TOKEN_PROVIDER_ERROR' });
    expect(named('channel.token_provider').map((s) => [s.attributes['error.type'], s.status.code])).toEqual([
      ['TOKEN_PROVIDER_ERROR', 2],
      ['timeout', 2],
    ]);
    expect(JSON.stringify(spans().map((s) => s.attributes))).not.toContain('secret-detail');
    expect(named('GET')).toEqual([]);
  });

  test('client.fetch: a span per attempt as well; credentials in the query are masked in url.full', async () => {
    const { client, sent } = setup();
    const res = await client.fetch(ORDER + '?sign=abc123&page=2&access_token=xyz');
    expect(res.status).toBe(200);
    const [span] = named('GET');
    expect(span.attributes['url.full']).toBe(sandbox.url + ORDER + '?sign=REDACTED&page=2&access_token=REDACTED');
    expect(sent[sent.length - 1].headers.get('traceparent')).toBe(ids(span));
  });

  test('propagate: false: spans, no header (a service whose CORS does not allow traceparent)', async () => {
    const { client, sent } = setup({ telemetry: clientTelemetry({ tracer, propagate: false }) });
    await client.get(ORDER);
    expect(named('GET')).toHaveLength(1);
    expect(sent.every((r) => !r.headers.has('traceparent'))).toBe(true);
  });

  test('a traceparent the caller set is kept', async () => {
    const { client, sent } = setup({ headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } });
    await client.get(ORDER);
    expect(sent[sent.length - 1].headers.get('traceparent')).toBe('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
    expect(named('GET')).toHaveLength(1);
  });
});

describe('without telemetry, or with a no-op tracer', () => {
  test('no option: no header, no span', async () => {
    const { client, sent } = setup({ telemetry: undefined });
    await client.get(ORDER);
    expect(sent.every((r) => !r.headers.has('traceparent'))).toBe(true);
    expect(spans()).toEqual([]);
  });

  test('the API without an SDK (a no-op tracer) and nothing active: no header', async () => {
    const { client, sent } = setup({ telemetry: clientTelemetry({ tracer: trace.getTracer('channel-sdk') }) });
    await client.get(ORDER);
    expect(sent.every((r) => !r.headers.has('traceparent'))).toBe(true);
  });
});

describe('a broken tracer or meter costs the requests nothing', () => {
  const throwing = () => {
    throw new Error('exporter down');
  };
  test.each([
    ['throws on every call', { startSpan: throwing, startActiveSpan: throwing }, { createCounter: throwing, createHistogram: throwing }],
    [
      'answers something else than a span, never runs the callback',
      { startSpan: () => ({}), startActiveSpan: () => undefined },
      { createCounter: () => ({ add: throwing }), createHistogram: () => ({ record: throwing }) },
    ],
    [
      'spans whose methods throw',
      {
        startSpan: () => ({ setAttribute: throwing, setStatus: throwing, end: throwing, spanContext: throwing }),
        startActiveSpan: (_name: string, _o: unknown, _c: unknown, fn: (span: unknown) => unknown) =>
          fn({ setAttribute: throwing, setStatus: throwing, end: throwing }),
      },
      undefined,
    ],
    [
      'is an async wrapper whose startActiveSpan rejects (its own setup failed), the callback never run',
      { startSpan: () => ({}), startActiveSpan: async () => throwing() },
      undefined,
    ],
    [
      'returns a thenable whose then throws, the callback never run', // eslint-disable-next-line unicorn/no-thenable -- the tracer's own thenable is what is tested
      { startSpan: () => ({}), startActiveSpan: () => ({ then: throwing }) },
      undefined,
    ],
    [
      'returns a thenable over a rejected setup whose then forwards onFulfilled only (a rejected promise back), the callback never run',
      {
        startSpan: () => ({}),
        startActiveSpan: () => {
          const failed = Promise.reject(new Error('exporter down'));
          // eslint-disable-next-line unicorn/no-thenable -- the tracer's own thenable is what is tested
          return { then: (ok: (v: unknown) => unknown) => failed.then(ok) };
        },
      },
      undefined,
    ],
  ])('a tracer that %s', async (_what, brokenTracer, brokenMeter) => {
    let calls = 0;
    const exchange = createTokenExchange({ baseUrl: sandbox.url, ...sandbox.credentials });
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const create = () =>
        createClient({
          baseUrl: sandbox.url,
          tokenProvider: async ({ forceRefresh }) => (calls++, (await exchange.getToken('user-42', { forceRefresh })).accessToken),
          telemetry: clientTelemetry({ tracer: brokenTracer as never, meter: brokenMeter as never }),
        });
      const client = create();
      await client.get(ORDER);
      sandbox.expireTokens();
      await Promise.all([client.get(ORDER), client.fetch(ORDER).then((r) => expect(r.status).toBe(200))]);
      expect(calls).toBe(2);
      await new Promise((r) => setTimeout(r, 10));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

describe('#42 item 6: a tracer that runs startActiveSpan’s callback late, twice or never costs one provider call per refresh', () => {
  type Run = (fn: (span: unknown) => unknown, span: () => unknown) => void;
  test.each<[string, Run]>([
    ['late, a macrotask after', (fn, span) => void setTimeout(() => fn(span()))],
    ['late, a microtask after', (fn, span) => queueMicrotask(() => void fn(span()))],
    ['twice at once', (fn, span) => (fn(span()), fn(span()))],
    ['at once and again later', (fn, span) => (fn(span()), setTimeout(() => fn(span())))],
    ['never', () => undefined],
  ])('a tracer that runs it %s: initial, after a 401 storm, forced by getToken: one provider call each; every span it handed over ends', async (_what, run) => {
    let calls = 0;
    let started = 0;
    let ended = 0;
    const span = () => (
      started++,
      { setAttribute() {}, setStatus() {}, spanContext: () => ({ traceId: '', spanId: '', traceFlags: 0 }), end: () => void ended++ }
    );
    const lateTracer = { startSpan: span, startActiveSpan: (_n: string, _o: unknown, _c: unknown, fn: (span: unknown) => unknown) => run(fn, span) };
    const exchange = createTokenExchange({ baseUrl: sandbox.url, ...sandbox.credentials });
    const client = createClient({
      baseUrl: sandbox.url,
      tokenProvider: async ({ forceRefresh }) => (calls++, (await exchange.getToken('user-42', { forceRefresh })).accessToken),
      telemetry: clientTelemetry({ tracer: lateTracer as never }),
    });
    await client.get(ORDER);
    await new Promise((r) => setTimeout(r, 20));
    expect(calls).toBe(1);
    sandbox.expireTokens();
    await Promise.all([client.get(ORDER), client.get(ORDER), client.fetch(ORDER).then((r) => expect(r.status).toBe(200))]);
    await new Promise((r) => setTimeout(r, 20));
    expect(calls).toBe(2);
    await client.getToken({ forceRefresh: true });
    await new Promise((r) => setTimeout(r, 20));
    expect(calls).toBe(3);
    expect(ended).toBe(started);
  });
});

describe('the telemetry option is checked', () => {
  test.each([
    [
      { tracer: {} },
      /telemetry must be \{ tracer, meter, propagate \} \(an OpenTelemetry Tracer.*; got an object with tracer an object, meter undefined, propagate undefined/,
    ],
    [{ propagate: 'no' }, /propagate "no"/],
    [{ meter: 'm' }, /got an object with tracer undefined, meter "m"/],
    [{ tracer: null }, /got an object with tracer null/],
    [{ tracers: {} }, /did you mean "tracer"/],
    ['yes', /telemetry must be \{ tracer.*; got "yes"$/],
    [null, /got null$/],
    [undefined, /clientTelemetry: telemetry must be \{ tracer.*; got null$/],
  ])('clientTelemetry(%j)', (telemetry, message) => {
    expect(() => clientTelemetry(telemetry as never)).toThrow(ConfigError);
    expect(() => clientTelemetry(telemetry as never)).toThrow(message);
  });

  // The option's shape before the plug-in (#44): the message names the import.
  test.each([[{ tracer: trace.getTracer('app') }], [{ tracer: {}, meter: {} }], ['yes'], [null], [{ attach: 'no' }]])(
    'createClient({ telemetry: %j })',
    (telemetry) => {
      const create = () => createClient({ baseUrl: sandbox.url, tokenProvider: async () => 't', telemetry: telemetry as never });
      expect(create).toThrow(ConfigError);
      expect(create).toThrow(/telemetry must be clientTelemetry\(\{ tracer, meter \}\), imported from 'channel-sdk\/telemetry'; got /);
    },
  );
});

describe('a span or an instrument that throws in one of its methods: every span started still ends (audit 8)', () => {
  const down = () => {
    throw new Error('exporter down');
  };
  /** `span` (the real SDK's) with its method `name` throwing; the others bound to the span itself. */
  const breaking = (name: string) => (span: Span) =>
    new Proxy(span, {
      get: (t, key) => {
        const value = (t as never as Record<PropertyKey, unknown>)[key];
        return key === name ? down : typeof value === 'function' ? value.bind(t) : value;
      },
    }) as Span;
  test.each([
    ['setAttribute throws', breaking('setAttribute'), undefined],
    ['setStatus throws (a 404 fails its span)', breaking('setStatus'), undefined],
    ['spanContext throws (no traceparent)', breaking('spanContext'), undefined],
    ["the meter's histogram and counter throw (a metric view that fails)", (span: Span) => span, 'meter'],
  ])('%s', async (_what, wrap, brokenMeter) => {
    let started = 0;
    const real = tracer;
    const wrapped = {
      startSpan: (name: string, options: never, parent: never) => (started++, wrap(real.startSpan(name, options, parent))),
      startActiveSpan: (name: string, options: never, parent: never, fn: (span: Span) => unknown) =>
        real.startActiveSpan(name, options, parent, (span: Span) => (started++, fn(wrap(span)))),
    };
    const instruments = { createCounter: () => ({ add: down }), createHistogram: () => ({ record: down }) };
    const { client } = setup({ telemetry: clientTelemetry({ tracer: wrapped as never, meter: brokenMeter ? (instruments as never) : meter }) });
    await client.get(ORDER);
    await expect(client.get('/open/api/v1/sdk/orders/NOPE')).rejects.toMatchObject({ status: 404 });
    await new Promise((r) => setTimeout(r, 10));
    expect(started).toBe(3);
    expect(spans().map((s) => s.name)).toEqual(['channel.token_provider', 'GET', 'GET']);
    expect([...open]).toEqual([]);
  });
});
