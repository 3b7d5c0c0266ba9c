/**
 * The token exchange's `telemetry` option with the real OpenTelemetry SDK against the sandbox: the
 * span per getToken (hit, miss, bypass, joined), the CLIENT span per token call with its
 * traceparent header as the server saw it, failures, parenting, metrics, nothing secret, and the
 * option's checks.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ConfigError, createTokenExchange } from '../../../src/server-node.js';
import { startSandbox, type Sandbox } from '../../../src/testing.js';
import { expectNoSecrets, otel, parentOf, type Otel } from './otel.js';

const INTERNAL = 0;
const CLIENT = 2;
const ERROR = 2;
let sandbox: Sandbox;
let o: Otel;
beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => {
  await sandbox?.close();
});
afterEach(async () => {
  await o?.close();
});

/** A node:http server in front of the sandbox that records each request's headers, then forwards it. */
async function recordingProxy(target: string) {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => !['host', 'connection', 'content-length'].includes(name))) as Record<
        string,
        string
      >;
      const answer = await fetch(target + req.url, { method: req.method, headers, body: Buffer.concat(chunks) });
      res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' }).end(await answer.text());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: 'http://127.0.0.1:' + (server.address() as AddressInfo).port,
    seen,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

test('a miss, then a hit, then a forced refresh: one span each, the token call a CLIENT child with its traceparent header as the server saw it', async () => {
  o = otel();
  const proxy = await recordingProxy(sandbox.url);
  try {
    const exchange = createTokenExchange({ baseUrl: proxy.url, ...sandbox.credentials, telemetry: o.telemetry });
    await exchange.getToken('user-1');
    await exchange.getToken('user-1');
    await exchange.getToken('user-1', { forceRefresh: true });
    const calls = o.named('channel.token_exchange');
    expect(calls.map((s) => [s.kind, s.attributes['channel.cache'], s.attributes['channel.force_refresh']])).toEqual([
      [INTERNAL, 'miss', false],
      [INTERNAL, 'hit', false],
      [INTERNAL, 'bypass', true],
    ]);
    const clients = o.spans().filter((s) => s.kind === CLIENT);
    expect(clients).toHaveLength(2);
    expect(clients.map(parentOf)).toEqual([calls[0].spanContext().spanId, calls[2].spanContext().spanId]);
    const port = Number(new URL(proxy.url).port);
    expect(clients[0].name).toBe('POST /open/api/v1/sdk/tokens');
    expect(clients[0].attributes).toEqual({
      'http.request.method': 'POST',
      'url.full': proxy.url + '/open/api/v1/sdk/tokens',
      'server.address': '127.0.0.1',
      'server.port': port,
      'http.response.status_code': 200,
    });
    // The header names the CLIENT span, and the trace is the exchange span's.
    expect(proxy.seen.map((h) => h.traceparent)).toEqual(clients.map((s) => '00-' + s.spanContext().traceId + '-' + s.spanContext().spanId + '-01'));
    expect(clients[0].spanContext().traceId).toBe(calls[0].spanContext().traceId);
  } finally {
    await proxy.close();
  }
});

test("the exchange span is a child of the caller's active span; callers that share one token call say so", async () => {
  o = otel();
  const exchange = createTokenExchange({ baseUrl: sandbox.url, ...sandbox.credentials, telemetry: o.telemetry });
  const before = sandbox.stats.tokenCalls;
  const caller = await o.within(async (span) => {
    await Promise.all([exchange.getToken('user-2'), exchange.getToken('user-2'), exchange.getToken('user-2')]);
    return span;
  });
  expect(sandbox.stats.tokenCalls - before).toBe(1);
  const calls = o.named('channel.token_exchange');
  expect(calls.map(parentOf)).toEqual([caller.spanContext().spanId, caller.spanContext().spanId, caller.spanContext().spanId]);
  expect(calls.map((s) => [s.attributes['channel.cache'], s.attributes['channel.token.joined']])).toEqual([
    ['miss', undefined],
    ['miss', true],
    ['miss', true],
  ]);
  // The one token call is the child of the call that made it.
  const client = o.spans().find((s) => s.kind === CLIENT)!;
  expect(parentOf(client)).toBe(calls[0].spanContext().spanId);
});

test('a token call the service refuses: ERROR on both spans, error.type the status and the error code', async () => {
  o = otel();
  const exchange = createTokenExchange({ baseUrl: sandbox.url, accessKey: sandbox.credentials.accessKey, secretKey: 'wrong-secret', telemetry: o.telemetry });
  await expect(exchange.getToken('user-3')).rejects.toMatchObject({ code: 'TOKEN_EXCHANGE_ERROR', status: 401 });
  const [client] = o.spans().filter((s) => s.kind === CLIENT);
  expect(client.status.code).toBe(ERROR);
  expect(client.attributes).toMatchObject({ 'http.response.status_code': 401, 'error.type': '401' });
  const [call] = o.named('channel.token_exchange');
  expect(call.status.code).toBe(ERROR);
  expect(call.attributes).toMatchObject({ 'channel.cache': 'miss', 'error.type': 'TOKEN_EXCHANGE_ERROR' });
  const points = await o.points();
  expect(points.find((p) => p.name === 'channel.server.token.call.duration')).toMatchObject({
    unit: 's',
    attributes: { 'http.response.status_code': 401, 'error.type': '401' },
    value: 1,
  });
  await expectNoSecrets(o, ['wrong-secret', sandbox.credentials.accessKey, 'user-3']);
});

test('an unreachable service and a slow one: error.type TOKEN_EXCHANGE_ERROR and timeout, no status', async () => {
  o = otel();
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const stalled = createServer(() => {});
  await new Promise<void>((resolve) => stalled.listen(0, '127.0.0.1', resolve));
  try {
    const gone = createTokenExchange({ baseUrl: 'http://127.0.0.1:' + port, ...sandbox.credentials, telemetry: o.telemetry });
    await expect(gone.getToken('u')).rejects.toMatchObject({ code: 'TOKEN_EXCHANGE_ERROR' });
    const slow = createTokenExchange({
      baseUrl: 'http://127.0.0.1:' + (stalled.address() as AddressInfo).port,
      ...sandbox.credentials,
      timeout: 300,
      telemetry: o.telemetry,
    });
    await expect(slow.getToken('u')).rejects.toMatchObject({ code: 'TOKEN_EXCHANGE_ERROR' });
    const clients = o.spans().filter((s) => s.kind === CLIENT);
    expect(clients.map((s) => [s.status.code, s.attributes['error.type'], s.attributes['http.response.status_code']])).toEqual([
      [ERROR, 'TOKEN_EXCHANGE_ERROR', undefined],
      [ERROR, 'timeout', undefined],
    ]);
  } finally {
    stalled.closeAllConnections();
    await new Promise<void>((resolve) => stalled.close(() => resolve()));
  }
});

test('metrics: cache outcomes by channel.cache, token calls and their duration in seconds', async () => {
  o = otel();
  const exchange = createTokenExchange({ baseUrl: sandbox.url, ...sandbox.credentials, telemetry: o.telemetry });
  await exchange.getToken('m1');
  await exchange.getToken('m1');
  await exchange.getToken('m1');
  await exchange.getToken('m2');
  await exchange.getToken('m1', { forceRefresh: true });
  const points = await o.points();
  const outcomes = Object.fromEntries(
    points.filter((p) => p.name === 'channel.server.token.cache_outcomes').map((p) => [p.attributes['channel.cache'], p.value]),
  );
  expect(outcomes).toEqual({ miss: 2, hit: 2, bypass: 1 });
  const durations = points.filter((p) => p.name === 'channel.server.token.call.duration');
  expect(durations).toHaveLength(1);
  expect(durations[0]).toMatchObject({ unit: 's', attributes: { 'http.response.status_code': 200 }, value: 3 });
  expect(durations[0].sum).toBeGreaterThan(0);
  expect(durations[0].sum).toBeLessThan(30); // seconds, not milliseconds
});

test('a meter alone counts; a tracer alone traces; a bad user id is a failed span with no cache outcome', async () => {
  o = otel();
  const metered = createTokenExchange({ baseUrl: sandbox.url, ...sandbox.credentials, telemetry: { meter: o.meter } });
  await metered.getToken('n1');
  expect(o.spans()).toEqual([]);
  expect((await o.points()).find((p) => p.name === 'channel.server.token.cache_outcomes')).toMatchObject({ value: 1 });
  const traced = createTokenExchange({ baseUrl: sandbox.url, ...sandbox.credentials, telemetry: { tracer: o.tracer } });
  await expect(traced.getToken('')).rejects.toBeInstanceOf(ConfigError);
  const [span] = o.named('channel.token_exchange');
  expect(span.attributes['channel.cache']).toBeUndefined();
  expect(span.attributes['error.type']).toBe('CONFIG_ERROR');
});

test('nothing secret in any span or metric: token, access and secret key, signature, user id', async () => {
  o = otel();
  const proxy = await recordingProxy(sandbox.url);
  const userId = 'secret-user-7e1f';
  try {
    const exchange = createTokenExchange({ baseUrl: proxy.url, ...sandbox.credentials, telemetry: o.telemetry });
    const { accessToken } = await exchange.getToken(userId);
    await exchange.getToken(userId, { forceRefresh: true });
    const signature = String(proxy.seen[0]['x-channel-signature']);
    expect(signature.length).toBeGreaterThan(8);
    await expectNoSecrets(o, [accessToken, sandbox.credentials.accessKey, sandbox.credentials.secretKey, signature, userId]);
  } finally {
    await proxy.close();
  }
});

test('without telemetry no traceparent is sent; a tracer with nothing to record (no-op) sends none either, nor one with propagate: false', async () => {
  const proxy = await recordingProxy(sandbox.url);
  try {
    await createTokenExchange({ baseUrl: proxy.url, ...sandbox.credentials }).getToken('p1');
    const { trace } = await import('@opentelemetry/api');
    // The API's no-op tracer: what trace.getTracer() answers before an SDK is registered.
    const noop = trace.getTracerProvider().getTracer('x');
    await createTokenExchange({ baseUrl: proxy.url, ...sandbox.credentials, telemetry: { tracer: noop } }).getToken('p2');
    // propagate: false: the span, no header.
    const exported = new InMemorySpanExporter();
    const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exported)] }).getTracer('x');
    await createTokenExchange({ baseUrl: proxy.url, ...sandbox.credentials, telemetry: { tracer, propagate: false } }).getToken('p3');
    expect(exported.getFinishedSpans().map((s) => s.name)).toContain('POST /open/api/v1/sdk/tokens');
    expect(proxy.seen.map((h) => h.traceparent)).toEqual([undefined, undefined, undefined]);
  } finally {
    await proxy.close();
  }
});

test('a telemetry option of the wrong shape is a ConfigError that says what to pass', () => {
  const base = { baseUrl: sandbox.url, ...sandbox.credentials };
  const bad: Array<[unknown, RegExp]> = [
    ['yes', /^\[channel-sdk\] createTokenExchange: telemetry must be \{ tracer, meter, propagate \}.*trace\.getTracer.*; got "yes"$/],
    [{ traceer: {} }, /did you mean "tracer"/],
    [{ tracer: {} }, /an OpenTelemetry Tracer and\/or Meter.*; got an object with tracer an object, meter undefined/],
    [{ meter: { createCounter() {} } }, /got an object with tracer undefined, meter an object/],
  ];
  for (const [telemetry, message] of bad) {
    expect(() => createTokenExchange({ ...base, telemetry } as never)).toThrow(ConfigError);
    expect(() => createTokenExchange({ ...base, telemetry } as never)).toThrow(message);
  }
  expect(() => createTokenExchange({ ...base, telemetri: {} } as never)).toThrow(/did you mean "telemetry"/);
});
