/**
 * The telemetry plug-in as it ships (#44 item 1): `channel-sdk/telemetry` is a bundle of its own
 * (dist/telemetry.js for bundlers, miniprogram_dist/telemetry.js for WeChat's npm build), and a
 * client bundled without it carries none of its span code or attribute names. With it, a
 * mini-program client in a realm without web APIs traces as the source does (the real
 * OpenTelemetry SDK). Needs `npm run build` first.
 */
import { readFileSync } from 'node:fs';
import vm from 'node:vm';
import { parse } from 'acorn';
import { build } from 'esbuild';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startFakeService, type FakeService } from '../helpers/fake-service.js';
import { createHost } from '../helpers/hosts.js';

// What the plug-in alone writes: the attribute names of its spans and metrics, and the calls it makes on a tracer and meter.
const TELEMETRY_CODE = [
  'http.request.method',
  'url.full',
  'server.address',
  'http.response.status_code',
  'http.request.resend_count',
  'channel.resend_reason',
  'channel.force_refresh',
  'channel.token_provider',
  'channel.client.',
  'startActiveSpan',
  'startSpan',
  'spanContext',
  'createHistogram',
  'createCounter',
  'opentelemetry.js.api',
];
const found = (code: string) => TELEMETRY_CODE.filter((name) => code.includes(name));

/** `code` bundled from the built package as a user's bundler would (esbuild, minified). */
async function bundle(code: string, platform: 'browser' | 'neutral' = 'browser'): Promise<string> {
  const result = await build({
    bundle: true,
    minify: true,
    format: 'esm',
    platform,
    mainFields: ['module', 'main'],
    write: false,
    logLevel: 'silent',
    stdin: { contents: code, resolveDir: process.cwd(), loader: 'js' },
  });
  return result.outputFiles[0].text;
}

describe('an app that does not import channel-sdk/telemetry carries none of it', () => {
  test.each([
    ['the browser entry, createClient only', "export { createClient } from 'channel-sdk';"],
    ['the browser entry, all exports', "export * from 'channel-sdk';"],
    ['the mini-program entry for uni-app and Taro, all exports', "export * from 'channel-sdk/miniprogram';"],
  ])('%s', async (_name, code) => {
    expect(found(await bundle(code))).toEqual([]);
  });

  test("WeChat's bundle (miniprogram_dist/index.js)", () => {
    expect(found(readFileSync('miniprogram_dist/index.js', 'utf8'))).toEqual([]);
  });

  test('and the plug-in has all of it (what the tests above look for is real)', async () => {
    expect(found(await bundle("export * from 'channel-sdk/telemetry';"))).toEqual(TELEMETRY_CODE);
    expect(found(readFileSync('miniprogram_dist/telemetry.js', 'utf8'))).toEqual(TELEMETRY_CODE);
  });
});

describe("the plug-in in WeChat's npm layout (miniprogram_dist/telemetry.js)", () => {
  const code = readFileSync('miniprogram_dist/telemetry.js', 'utf8');
  let service: FakeService;
  beforeAll(async () => {
    service = await startFakeService();
  });
  afterAll(() => service.close());

  test('ES2017 syntax, nothing required, no globalThis', () => {
    expect(() => parse(code, { ecmaVersion: 2017, sourceType: 'script' })).not.toThrow();
    expect(code.match(/\brequire\(|\bglobalThis\b|\beval\(|\bnew Function\b/)?.[0]).toBeUndefined();
  });

  test('traces a 401 -> refresh -> replay in a realm without web APIs: a span per attempt, its traceparent on the wire, one forced provider span', async () => {
    const exporter = new InMemorySpanExporter();
    const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('channel-sdk');
    const wx = createHost('wx');
    const context = vm.createContext({ setTimeout, clearTimeout, wx, SERVICE: service.url, issue: () => service.issue(), tracer });
    vm.runInContext('delete globalThis.globalThis;', context);
    const load = (file: string) => {
      const module = { exports: {} as Record<string, unknown> };
      vm.runInContext(`(function (module, exports, require) {${readFileSync(file, 'utf8')}\n})`, context)(module, module.exports, () => {
        throw new Error(file + ' must not require anything');
      });
      return module.exports;
    };
    Object.assign(context, { sdk: load('miniprogram_dist/index.js'), telemetry: load('miniprogram_dist/telemetry.js'), expireAll: () => service.expireAll() });
    const forced = await vm.runInContext(
      `(async () => {
        let forced = 0;
        const client = sdk.createClient({
          baseUrl: SERVICE,
          tokenProvider: ({ forceRefresh }) => { if (forceRefresh) forced++; return issue(); },
          telemetry: telemetry.clientTelemetry({ tracer }),
        });
        await client.get('/a');
        expireAll();
        await client.get('/b');
        return forced;
      })()`,
      context,
    );
    expect(forced).toBe(1);
    const spans = exporter.getFinishedSpans();
    expect(spans.filter((s) => s.name === 'GET').map((s) => [s.attributes['http.response.status_code'], s.attributes['http.request.resend_count']])).toEqual([
      [200, undefined],
      [401, undefined],
      [200, 1],
    ]);
    expect(spans.filter((s) => s.name === 'channel.token_provider').map((s) => s.attributes['channel.force_refresh'])).toEqual([false, true]);
    const sent = wx.calls.map((call) => (call.header as Record<string, string>).traceparent);
    const attempts = spans.filter((s) => s.name === 'GET').map((s) => `00-${s.spanContext().traceId}-${s.spanContext().spanId}-01`);
    expect(sent).toEqual(attempts);
  });
});
